"""``isGreaterThan``, ``isLessThan`` and ``compareTo``: the methods Kubernetes' quantity and
semver libraries both declare (cel-go merges their overloads under one name), comparing two
``kubernetes.Quantity`` or two ``kubernetes.Semver`` values."""

from __future__ import annotations

from typing import Any

from ..types import BOOL, INT, Type
from ..values import no_such_overload
from .function import Function, Overload
from .quantity import QUANTITY_T
from .resource_quantity import Quantity
from .semver import SEMVER_T, Semver


def _compare(name: str, a: Any, b: Any) -> int:
    kind = type(a)
    if (kind is Quantity or kind is Semver) and type(b) is kind:
        return a.compare(b)
    raise no_such_overload(name, a, b)


def _is_greater_than(a: Any, b: Any) -> bool:
    return _compare("isGreaterThan", a, b) == 1


def _is_less_than(a: Any, b: Any) -> bool:
    return _compare("isLessThan", a, b) == -1


def _compare_to(a: Any, b: Any) -> int:
    return _compare("compareTo", a, b)


def _overloads(oid: str, result: Type) -> tuple[Overload, ...]:
    return (Overload(f"quantity_{oid}", (QUANTITY_T, QUANTITY_T), result, member=True),
            Overload(f"semver_{oid}", (SEMVER_T, SEMVER_T), result, member=True))


FUNCTIONS: list[Function] = [
    Function("isGreaterThan", _overloads("is_greater_than", BOOL), _is_greater_than,
             doc="whether the quantity (version) is greater than the other",
             examples=("quantity('50Mi').isGreaterThan(quantity('50M'))",
                       "semver('1.10.0').isGreaterThan(semver('1.9.0'))")),
    Function("isLessThan", _overloads("is_less_than", BOOL), _is_less_than,
             doc="whether the quantity (version) is less than the other",
             examples=("quantity('50M').isLessThan(quantity('50Mi'))",
                       "semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))")),
    Function("compareTo", _overloads("compare_to", INT), _compare_to,
             doc="-1, 0 or 1 as the quantity (version) is less than, equal to or greater "
                 "than the other",
             examples=("quantity('200M').compareTo(quantity('0.2G'))",
                       "semver('1.2.3').compareTo(semver('2.0.0'))")),
]
