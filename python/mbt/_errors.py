"""mbt.Error, apart so that the package's modules share it."""


class Error(Exception):
    """A spec that does not compile, data that does not fit the model, or a
    run that fails; the message says where, as mbtc does."""
