"""Thread pool of the chunked NumPy search: how many chunks run at once, in order."""

import collections
import os
from concurrent.futures import ThreadPoolExecutor


def _search_workers():
    """Chunks processed at once by the NumPy search: the usable cores, at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def _map_in_threads(function, items, workers):
    """`map(function, items)` in order, with at most `workers` items in flight."""
    if workers == 1:
        yield from map(function, items)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = collections.deque()
        for item in items:
            pending.append(pool.submit(function, item))
            if len(pending) >= workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
