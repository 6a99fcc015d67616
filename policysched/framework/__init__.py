"""The scheduling framework engine: the extension points (``runtime``), the scheduling and
binding cycles, event handling, the queue, permit's waiting room and preemption, over the
cache's snapshots; it reaches a cluster only through ``backend.Backend``."""
