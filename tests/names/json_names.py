"""tests/names/json_names.py: the string values of some keys ("function" by
default) at any depth of a report's JSON, in document order. Shared by
check_names.py and test_names.sh's checks."""


def json_names(o, keys=("function",), out=None):
    out = [] if out is None else out
    if isinstance(o, dict):
        for k, v in o.items():
            if k in keys and isinstance(v, str):
                out.append(v)
            else:
                json_names(v, keys, out)
    elif isinstance(o, list):
        for v in o:
            json_names(v, keys, out)
    return out
