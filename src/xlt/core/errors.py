"""User-facing errors: printed by the CLI as one clear line, without a traceback."""


class XltError(Exception):
    """Bad input or configuration: the message names the problem and the fix."""
