"""The C extension (courier/_speedups*.c, the hot path of requests) for setuptools to build; pyproject.toml
holds the metadata. The extension is optional: without a compiler or Python's headers the package
installs and runs on ctypes alone. Either way the wheel is platform-specific (it may carry the
extension, and `make python-wheel` bundles libcourier)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("courier._speedups", sources=["courier/_speedups.c", "courier/_speedups_responses.c"],
                             depends=["courier/_speedups.h"], optional=True)])
