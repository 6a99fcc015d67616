"""The error every command reports as is: bad input from the user."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user: the message is shown as is, the command exits 1."""
