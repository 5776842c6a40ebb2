"""Groups and chains for the Python binding (Engine.group, Engine.chain).

A group is the library's (courier_group: one shared queue, fail-fast cancellation in the
library); a chain is a sequence of blocking sends, each built once the previous answered.
"""
import ctypes
from collections import namedtuple

from . import _native
from ._native import lib

#: What Engine.chain returns: one Response or CourierError per step that ran, the index of the
#: step that failed (or None), and whether on_next or a builder stopped the chain early.
ChainOutcome = namedtuple("ChainOutcome", ["results", "failed_step", "stopped_early"])


def _step(item):
    if len(item) == 2:
        return item[0], item[1], {}
    return item[0], item[1], dict(item[2])


def group(engine, requests, fail_fast):
    from ._response import Response
    from ._request import _free_request
    from ._support import _check, _error
    handles = []
    handle = _native.group_p()
    try:
        for item in requests:
            method, url, options = _step(item)
            handles.append(engine._build(method, url, **options))
        _check(lib.courier_group_create(1 if fail_fast else 0, ctypes.byref(handle)))
        for request in handles:
            _check(lib.courier_group_add(handle, request))
        lib.courier_group_perform(handle)
        results = []
        for index, request in enumerate(handles):
            response_handle = _native.response_p()
            code = lib.courier_group_result(handle, index, ctypes.byref(response_handle))
            response = Response._of(response_handle, owned=False) if response_handle.value else None
            if code:
                results.append(_error(code, lib.courier_request_errmsg(request).decode(), response))
            else:
                results.append(response)
        return results
    finally:
        if handle.value:
            lib.courier_group_free(handle)
        for request in handles:
            _free_request(request)


def chain(engine, steps, on_next):
    from . import CourierError
    results = []
    previous = None
    for index, step in enumerate(steps):
        if callable(step):
            if previous is None:
                raise ValueError("a chain's first step cannot be built from a previous response")
            step = step(previous)
            if step is None:
                return ChainOutcome(results, None, True)
        if previous is not None and on_next is not None:
            step = on_next(index - 1, previous, step)
            if step is None:
                return ChainOutcome(results, None, True)
        method, url, options = _step(step)
        try:
            previous = engine.request(method, url, **options)
        except CourierError as error:
            results.append(error)
            return ChainOutcome(results, index, False)
        results.append(previous)
    return ChainOutcome(results, None, False)
