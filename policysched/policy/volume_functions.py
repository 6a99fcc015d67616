"""The CEL function of ``volumeBinder`` (``policysched.VolumeBinder``): kube-scheduler's
volume binder on a node, ``volumeBinder.bindings(node) -> policysched.VolumeBindings``.

The value is computed by the engine (``model.volume_binding.VolumeBinder``); here is only
what the policy layer needs to type-check and compile rules reading it.
"""

from __future__ import annotations

from typing import Any

from ..cel.library.function import Function, member_overload
from ..cel.types import Type
from ..cel.values import no_such_overload

# as declared in ``variables`` (which imports this module): types compare by name
VOLUME_BINDER_TYPE = Type("policysched.VolumeBinder")
VOLUME_BINDINGS_TYPE = Type("policysched.VolumeBindings")
NODE_TYPE = Type("policysched.Node")

_FIND_COST = 20  # a few claims, each over the volumes of its class (indexed)


def _bindings(binder: Any, node: Any) -> dict[str, Any]:
    if not hasattr(binder, "bindings") or type(node) is not dict \
            or type(node.get("name")) is not str or type(node.get("labels")) is not dict:
        raise no_such_overload("bindings", binder, node)
    found: dict[str, Any] = binder.bindings(node)
    return found


FUNCTIONS: tuple[Function, ...] = (
    Function("bindings",
             (member_overload("volume_binder_bindings_node",
                              (VOLUME_BINDER_TYPE, NODE_TYPE), VOLUME_BINDINGS_TYPE),),
             _bindings, cost=_FIND_COST,
             doc="kube-scheduler's FindPodVolumes on the node: the PersistentVolume each "
                 "unbound WaitForFirstConsumer claim of the pod would bind to there "
                 "(`static`), the claims that would be provisioned (`provisions`), those "
                 "with neither (`unmatched`), and whether the claims already bound admit "
                 "the node",
             examples=("volumeBinder.bindings(node).unmatched.size() == 0",)),
)
