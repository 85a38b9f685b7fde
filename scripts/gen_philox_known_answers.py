#!/usr/bin/python3
"""Known answers for kiln's GPU random streams (templates/gpu/random_math.h), from NumPy's own
Philox bit generator: tests/unit/test_gpu_random.cpp pastes this script's output.

- raw Philox4x64-10 blocks: numpy.random.Philox(key=k, counter=c - 1).random_raw(4) is the block
  of counter c (NumPy adds one to the counter before each block);
- the key of an rng value (the six uint64 words of kiln's PCG64 layout): the first two words of
  the block of counter (w0, w1, w2, w3) under key (w4, w5);
- element e's first uniform: the first word of the block of counter (0, e, 0, 0) under that key,
  as (word >> 11) * 2**-53 (what UniformRV(0, 1) draws there);
- next_rng: the PCG64 state one LCG step on, inc kept, the buffered half-word cleared.

Run with Debian's /usr/bin/python3 (NumPy 1.24 here).
"""
import numpy as np

M64 = (1 << 64) - 1


def block(counter, key):
    c = sum(int(w) << (64 * i) for i, w in enumerate(counter))
    c = (c - 1) % (1 << 256)
    words = [(c >> (64 * i)) & M64 for i in range(4)]
    g = np.random.Philox(key=np.array(key, dtype=np.uint64), counter=np.array(words, dtype=np.uint64))
    return [int(x) for x in g.random_raw(4)]


def rng_words(seed):
    s = np.random.PCG64(seed).state
    st, inc = s["state"]["state"], s["state"]["inc"]
    return [st >> 64, st & M64, inc >> 64, inc & M64, s["has_uint32"], s["uinteger"]]


def next_words(w):
    mult = (2549297995355413924 << 64) + 4865540595714422341
    state = ((w[0] << 64) | w[1]) * mult + ((w[2] << 64) | w[3])
    state &= (1 << 128) - 1
    return [state >> 64, state & M64, w[2], w[3], 0, 0]


def hexs(ws):
    return ", ".join("0x%016xULL" % w for w in ws)


print("// scripts/gen_philox_known_answers.py (NumPy %s)" % np.__version__)
print("// {counter[4], key[2], block[4]}")
cases = [([0, 0, 0, 0], [0, 0]), ([1, 0, 0, 0], [0, 0]), ([0, 7, 0, 0], [123, 456]),
         ([M64, M64, M64, M64], [M64, M64]), ([3, 1 << 40, 5, 9], [0x243F6A8885A308D3, 0x13198A2E03707344])]
for ctr, key in cases:
    print("{{%s}, {%s}, {%s}}," % (hexs(ctr), hexs(key), hexs(block(ctr, key))))
for seed in (19, 2024):
    w = rng_words(seed)
    k = block(w[:4], w[4:])[:2]
    print("// seed %d: rng words, key, next_rng words, first uniforms of elements 0..5" % seed)
    print("{{%s}, {%s}, {%s}," % (hexs(w), hexs(k), hexs(next_words(w))))
    print(" {%s}}," % ", ".join(repr((block([0, e, 0, 0], k)[0] >> 11) * 2.0 ** -53) for e in range(6)))
