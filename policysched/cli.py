"""The ``policysched`` command line."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import click

from .policy import load_policy_set, render_json, render_text
from .policy import messages as policy_messages

EXIT_INVALID = 1


def _version() -> str:
    try:
        return version("policysched")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="policysched")
def main() -> None:
    """A Kubernetes scheduler whose plugins are SchedulingPolicy documents of CEL
    expressions."""


@main.command()
@click.argument(
    "paths", nargs=-1, required=True,
    type=click.Path(exists=True, dir_okay=True, readable=False, path_type=str),
)
@click.option(
    "--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text: one line per error with the source line and a caret; json: "
    '{"valid": bool, "errors": [...]}.',
)
@click.option(
    "--color/--no-color", default=None,
    help="Colour the text output (default: only when writing to a terminal).",
)
def validate(paths: tuple[str, ...], output: str, color: bool | None) -> None:
    """Check SchedulingPolicy files: YAML, schema, and every CEL expression compiled for
    its extension point.

    PATHS are files or directories (searched recursively for *.yaml and *.yml); files may
    hold several documents and ConfigMaps whose keys hold policies. Exits 0 when everything
    is valid, 1 when there are errors.
    """
    policy_set = load_policy_set(paths)
    files = policy_messages.count(len(policy_set.files), "file")
    if output == "json":
        click.echo(render_json(policy_set.diagnostics,
                               policies=[p.name for p in policy_set.policies],
                               files=list(policy_set.files)))
    elif policy_set.valid:
        valid = policy_messages.count(len(policy_set.policies), "policy")
        if policy_set.configurations:
            valid += " and " + policy_messages.count(len(policy_set.configurations),
                                                     "configuration")
        click.echo(policy_messages.SUMMARY_VALID.format(policies=valid, files=files))
    else:
        use_color = True if color is None else color
        click.echo(render_text(policy_set.diagnostics, color=use_color), color=color)
        errors = policy_messages.count(len(policy_set.diagnostics), "error")
        click.echo(policy_messages.SUMMARY_INVALID.format(errors=errors, files=files),
                   err=True)
    if not policy_set.valid:
        click.get_current_context().exit(EXIT_INVALID)
