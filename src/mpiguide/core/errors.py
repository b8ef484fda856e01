"""Errors that are the user's to fix: the CLI prints them without a traceback and exits 2."""


class MpiguideError(Exception):
    """A problem with user input or data, stated so the user can fix it.

    The message names the file and the key/line/column at fault and says what is allowed.
    """


class ConfigError(MpiguideError):
    """Invalid campaign config or guideline catalogue."""


class DataError(MpiguideError):
    """Measured data that cannot be analysed as it is (missing rows, checksum mismatch, ...)."""
