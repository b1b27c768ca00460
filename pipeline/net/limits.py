"""The largest sizes a param, a config.json or a request may ask for (refused before anything is allocated)."""

MAX_WIDTH = 4096  # embedding width (the paper's models: 256)
MAX_FF = 16384  # feed-forward width of an encoder layer
MAX_HEADS = 64  # attention heads
MAX_LAYERS = 32  # encoder layers
MAX_BATCH = 65536  # samples per training batch
MAX_GAMES = 10_000_000  # games of any one param (a duel pairing, a loop, a table fit, a benchmark)
MAX_EPOCHS = 10_000  # training epochs
