"""The long-running scheduler (``policysched run``): the service loop, leader election,
policy hot reload, the health/metrics server and the metrics, with the observer types
they share."""
