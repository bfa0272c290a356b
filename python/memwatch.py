"""memwatch regions for Python programs (docs/regions.md).

    import memwatch

    with memwatch.region("solve"):
        solve()

    @memwatch.region("step")        # or @memwatch.region: named after the function
    def step(): ...

Regions nest and are per thread. They are recorded when the program runs
under `memwatch record` (or with LD_PRELOAD=libmemwatch.so), through ctypes
calls of libmemwatch.so's memwatch_region_begin/end; without the library
every call does nothing. Pure Python, no dependency: put this file on
PYTHONPATH (or next to the script).
"""
import ctypes
import functools

__all__ = ["region", "begin", "end", "enabled"]

_begin = _end = None
try:
    _self = ctypes.CDLL(None)
    _begin = _self.memwatch_region_begin
    _end = _self.memwatch_region_end
    for _f in (_begin, _end):
        _f.argtypes = [ctypes.c_char_p]
        _f.restype = None
except (OSError, AttributeError):
    _begin = _end = None


def enabled():
    """True when libmemwatch.so is loaded in this process (regions are recorded)."""
    return _begin is not None


def _name(name):
    if isinstance(name, bytes):
        return name
    return str(name).encode("utf-8", "replace")


def begin(name):
    """Begin the region `name` on the calling thread."""
    if _begin is not None:
        _begin(_name(name))


def end(name):
    """End the innermost open region `name` of the calling thread."""
    if _end is not None:
        _end(_name(name))


class region:
    """A region as a context manager or a decorator.

    memwatch.region("name") works both ways; memwatch.region applied directly
    to a function names the region after the function's qualified name.
    """

    def __new__(cls, name):
        if callable(name) and not isinstance(name, (str, bytes)):
            return cls(getattr(name, "__qualname__", getattr(name, "__name__", "?")))(name)
        return super().__new__(cls)

    def __init__(self, name):
        self._b = _name(name)

    def __enter__(self):
        if _begin is not None:
            _begin(self._b)
        return self

    def __exit__(self, *exc):
        if _end is not None:
            _end(self._b)
        return False

    def __call__(self, fn):
        b = self._b

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _begin is None:
                return fn(*args, **kwargs)
            _begin(b)
            try:
                return fn(*args, **kwargs)
            finally:
                _end(b)

        return wrapper
