"""The model the engine works on: views of the API objects (pods, nodes, pod groups,
priority classes), the cluster events that carry them, and the clock."""
