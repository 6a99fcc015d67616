"""The scheduling framework engine: extension-point runner, queue, scheduling cycle."""
