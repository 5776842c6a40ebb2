"""Only here to mark a wheel that bundles libcourier as platform-specific (pyproject.toml holds
the metadata): a pure wheel would claim to run anywhere."""

import glob
import os

from setuptools import setup
from setuptools.dist import Distribution


class _Distribution(Distribution):
    def has_ext_modules(self):
        return bool(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "courier", "libcourier.so.*")))


setup(distclass=_Distribution)
