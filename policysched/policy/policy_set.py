"""Load, validate and compile a set of policies: what ``validate`` checks and the
scheduler runs. A set is only usable when it has no errors (warnings do not count)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..cel.compatibility import DEFAULT_VERSION, KubernetesVersion
from . import cel_version, messages, schema
from .compile import Checkpoint, compile_policy
from .diagnostics import Diagnostic, DiagnosticKind, sort_key
from .documents import CONFIGURATION_KIND, POLICY_KIND, LoadedDocument
from .limits import DEFAULT_LIMITS, PolicyLimits
from .loader import LoadResult, load_paths
from .model import Policy


@dataclass(frozen=True)
class PolicySet:
    """Compiled ``policies`` (in load order), the SchedulerConfiguration documents found
    alongside them, every diagnostic (sorted by position) and the files read."""

    policies: tuple[Policy, ...]
    configurations: tuple[LoadedDocument, ...]
    diagnostics: tuple[Diagnostic, ...]
    files: tuple[str, ...]
    documents: int  # policy documents found, valid or not

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if not d.is_error)

    def policy(self, name: str) -> Policy | None:
        return next((p for p in self.policies if p.name == name), None)


def load_policy_set(paths: Iterable[str | os.PathLike[str]],
                    limits: PolicyLimits = DEFAULT_LIMITS,
                    version: KubernetesVersion = DEFAULT_VERSION) -> PolicySet:
    """Everything under ``paths`` (files and directories), validated and compiled at the
    CEL compatibility ``version`` (the built-in library at its own: ``cel_version``)."""
    return build_policy_set(load_paths(paths, limits), lambda document: compile_document(
        document, version=cel_version.for_document(document, version)))


CompiledDocument = tuple[list[Diagnostic], Policy | None]
"""One document's diagnostics, and its compiled policy (None for a configuration or when
it has errors)."""


def compile_document(document: LoadedDocument, checkpoint: Checkpoint | None = None,
                     version: KubernetesVersion = DEFAULT_VERSION) -> CompiledDocument:
    """Schema-validate one document and compile it when it is a policy (``checkpoint``,
    ``version``: see ``compile_policy``)."""
    problems = schema.validate(document)
    if document.kind == CONFIGURATION_KIND:
        return problems, None
    policy, errors = compile_policy(document, schema_valid=not problems, checkpoint=checkpoint,
                                    version=version)
    return problems + errors, policy


def build_policy_set(loaded: LoadResult,
                     compile_one: Callable[[LoadedDocument], CompiledDocument] = compile_document
                     ) -> PolicySet:
    """The policy set of ``loaded``; ``compile_one`` may memoise ``compile_document``."""
    diagnostics = list(loaded.diagnostics)
    policies: list[Policy] = []
    configurations: list[LoadedDocument] = []
    for document in loaded.documents:
        problems, policy = compile_one(document)
        diagnostics += problems
        if document.kind == CONFIGURATION_KIND:
            if not problems:
                configurations.append(document)
        elif policy is not None:
            policies.append(policy)
    diagnostics += duplicate_names(loaded.documents)
    return PolicySet(
        policies=tuple(policies),
        configurations=tuple(configurations),
        diagnostics=tuple(sorted(diagnostics, key=sort_key)),
        files=tuple(loaded.files),
        documents=sum(1 for d in loaded.documents if d.kind == POLICY_KIND),
    )


def duplicate_names(documents: Sequence[LoadedDocument]) -> list[Diagnostic]:
    """A policy name used by two documents: an error at the second."""
    first: dict[str, LoadedDocument] = {}
    out: list[Diagnostic] = []
    for document in documents:
        name = document.name
        if document.kind != POLICY_KIND or name is None:
            continue
        if name not in first:
            first[name] = document
            continue
        earlier = first[name]
        location = str(earlier.yaml.position(("metadata", "name")))
        if earlier.origin:
            location += f" ({earlier.origin})"
        message = messages.DUPLICATE_POLICY.format(name=name, location=location)
        out.append(document.diagnostic(("metadata", "name"), DiagnosticKind.DUPLICATE_NAME,
                                       message))
    return out
