"""The Click that Typer runs: recent Typer versions carry their own copy (``typer._click``)."""

try:
    from typer._click.exceptions import NoArgsIsHelpError, UsageError
    from typer._click.globals import get_current_context
except ImportError:  # Typer before it vendored Click
    from click import get_current_context
    from click.exceptions import NoArgsIsHelpError, UsageError

__all__ = ["NoArgsIsHelpError", "UsageError", "get_current_context"]
