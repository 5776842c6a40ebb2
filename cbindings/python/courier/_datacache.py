"""``DataCache``: an engine and its cache for fetching resources by URL (images, files)."""

from ._cache import Cache
from ._engine import Engine


class DataCache:
    """MKNetworkKit's image cache for any blob (thumbnails, avatars): the bytes of a URL through
    an HTTP cache of their own, kept in a directory and in memory, answered from storage whatever
    their age (``cache_else_load``) and fetched once otherwise. Decoding images is the caller's."""

    def __init__(self, directory, memory=None, disk=None, headers=None):
        self._cache = Cache(directory, memory, disk)
        self._engine = Engine(None, headers=headers, cache=self._cache)

    def get(self, url, **options):
        """The bytes of ``url``."""
        options.setdefault("cache", "cache_else_load")
        return self._engine.get(url, **options).body

    async def get_async(self, url, **options):
        options.setdefault("cache", "cache_else_load")
        return (await self._engine.fetch("GET", url, **options)).body

    @property
    def cache(self):
        return self._cache

    def close(self):
        """Waits for what the disk tier is still writing, then releases the engine and the cache:
        once closed, nothing more is written to the directory (it can be removed at once)."""
        if self._cache._handle:
            self._cache.flush()
        self._engine.close()
        self._cache.close()
