"""Block plan of the exact search: queries per block and references per tile (bounded memory)."""

# Elements of one similarity block (128 MB float32).
BLOCK_ELEMENTS = 2**25
# Fewest queries per block before the references are tiled as well.
MIN_CHUNK = 256
# References per tile when tiling: blocks of 2,048 queries x 16,384 references measured the
# fastest float32 matmul of the block shapes tried (benchmarks/speed/evaluation_scale.py machine).
TILE = 16384


def default_chunk_size(num_references):
    """Queries per block so that one full-row block `[chunk, N]` stays near 128 MB."""
    return max(1, BLOCK_ELEMENTS // max(1, num_references))


def plan_blocks(num_references, chunk_size=None, tile_size=None):
    """`(chunk, tile)`: queries per block and references per tile (`tile >= N`: no tiling)."""
    if tile_size is None:
        full_chunk = chunk_size or default_chunk_size(num_references)
        if full_chunk >= MIN_CHUNK or chunk_size is not None:
            return full_chunk, max(1, num_references)
        tile_size = TILE
    tile = max(1, int(tile_size))
    chunk = chunk_size or max(1, BLOCK_ELEMENTS // tile)
    return int(chunk), tile
