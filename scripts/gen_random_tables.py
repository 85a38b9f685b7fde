#!/usr/bin/env python3
"""Writes runtime/include/kiln/runtime/random/tables.hpp: the 256-layer ziggurat tables of the
standard normal and standard exponential samplers and the log(k!) table, each equal bit for
bit to the tables NumPy's Generator uses (NumPy 2.x).

    python3 scripts/gen_random_tables.py              # tables from their defining equations
    build/venv/bin/python scripts/gen_random_tables.py --probe-numpy   # also measure NumPy

How the tables are defined (Marsaglia & Tsang, "The Ziggurat Method for Generating Random
Variables", 2000). For a decreasing density f on [0, inf) with 256 layers of equal area V and a
base strip ending at r, the layer edges are x[255] = r, x[i-1] = f^-1(f(x[i]) + V / x[i]), down
to x[0] = 0. With B bits of the uniform integer:
    w[i] = x[i] / 2^B, w[0] = V / f(r) / 2^B      (the scale turning the integer into x)
    k[i] = round(2^B * x[i-1] / x[i]), k[0] = round(2^B * r f(r) / V)   (quick-accept bounds)
    f[i] = f(x[i])
  normal:      f(x) = exp(-x^2/2), r = 3.6541528853610087963519472518,
               V = 0.0049286732339746519, B = 52, evaluated in double arithmetic.
  exponential: f(x) = exp(-x), r = 7.6971174701310497140446280481, V = (r + 1) exp(-r),
               B = 53, evaluated to 60 digits and rounded once to double.
Two details reproduce how NumPy's published tables were made on their author's machine:
  - the normal recursion there evaluated exp(-x[38]^2 / 2) = 0.677388036218773470305... (a
    near tie) one unit in the last place above the correctly rounded double; NORMAL_EXP_ROUNDING
    applies that one rounding, from which x[37..1], k, w and f all follow;
  - NumPy's exponential quick-accept bounds k[2..255] lie up to 2 units (of 2^53) below the
    exact round(2^53 x[i-1]/x[i]); no evaluation order we tried reproduces them, so they are
    measured from NumPy itself (--probe-numpy: a crafted PCG64 state makes the sampler's first
    64-bit word any chosen value; the bound is the smallest 53-bit integer that makes
    standard_exponential read a second word) and kept in EXPONENTIAL_K_MEASURED. The probe also
    re-measures every other quick-accept bound and every w scale of both samplers, so a run with
    --probe-numpy checks this file against the installed NumPy.
log(k!) for k < 126: correctly rounded, from exact factorials.
"""

import argparse
import math
import os
import sys
from decimal import Decimal, getcontext

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "runtime", "include", "kiln", "runtime", "random", "tables.hpp")

NORMAL_R = "3.6541528853610087963519472518"
NORMAL_V = 0.0049286732339746519
EXPONENTIAL_R = "7.6971174701310497140446280481"
# exp(-x*x/2) at the one argument where NumPy's table generator's libm rounded a near tie up.
NORMAL_EXP_ROUNDING = {0.6773880362187734: 0.6773880362187735}
# NumPy's exponential quick-accept bounds where they differ from round(2^53 x[i-1]/x[i]);
# filled in by --probe-numpy --write-measured (see the module doc).
EXPONENTIAL_K_MEASURED = {
    0: 7971545857431494, 2: 5485857970336126, 5: 7829793950745724, 6: 8045251395085594,
    7: 8193552821270898, 8: 8301707212298418, 9: 8384003209374832, 10: 8448689755168200,
    11: 8500854585063478, 12: 8543802742323106, 13: 8579772857648236, 15: 8636619566280862,
    16: 8659465946817878, 17: 8679505875409358, 18: 8697225801520776, 21: 8739893704890038,
    22: 8751440024696698, 23: 8761948238062960, 24: 8771552003860596, 27: 8795968123070796,
    28: 8802909988292858, 29: 8809359087581710, 30: 8815365821575970, 32: 8826221564107158,
    33: 8831142137483404, 35: 8840116277974648, 36: 8844218838221542, 39: 8855228670347734,
    40: 8858520825126080, 41: 8861647414312948, 43: 8867450613535032, 45: 8872721150032146,
    46: 8875178565190242, 47: 8877527574738170, 48: 8879774994610604, 50: 8883989561556502,
    51: 8885967738067168, 53: 8889690284057818, 54: 8891443315947666, 56: 8894752200505984,
    57: 8896314950123264, 58: 8897820767252858, 59: 8899272528353282, 60: 8900672915349966,
    61: 8902024431744704, 62: 8903329417147192, 63: 8904590060406012, 64: 8905808411494018,
    65: 8906986392283810, 66: 8908125806332284, 67: 8909228347778946, 68: 8910295609450180,
    69: 8911329090250868, 70: 8912330201915374, 71: 8913300275181656, 73: 8915152257942916,
    74: 8916036472512488, 75: 8916894267966144, 76: 8917726646115692, 77: 8918534555480190,
    78: 8919318894705170, 80: 8920820226650618, 81: 8921538794526266, 82: 8922236947769418,
    83: 8922915378515480, 85: 8924215672351958, 86: 8924838756848636, 87: 8925444565237162,
    88: 8926033637539416, 89: 8926606488305930, 90: 8927163608008600, 91: 8927705464339880,
    92: 8928232503425544, 96: 8930200716406566, 98: 8931106112007190, 99: 8931540330647876,
    100: 8931962646340834, 102: 8932772736543124, 103: 8933161062973652, 104: 8933538591444894,
    105: 8933905568527004, 106: 8934262229948010, 107: 8934608801054528, 109: 8935272524376414,
    110: 8935590079148328, 111: 8935898349461876, 112: 8936197514758882, 113: 8936487746340036,
    114: 8936769207664048, 115: 8937042054628744, 116: 8937306435835058, 117: 8937562492834854,
    119: 8938050166557284, 120: 8938282033158466, 121: 8938506075705162, 123: 8938931120826946,
    125: 8939326108632062, 126: 8939512558669762, 127: 8939691756774158, 130: 8940186578789100,
    131: 8940337483389966, 132: 8940481468399302, 133: 8940618585695992, 134: 8940748882454662,
    136: 8940989179835208, 139: 8941299385782368, 140: 8941389491993960, 141: 8941472979468230,
    142: 8941549858918698, 143: 8941620136527848, 145: 8941740888162738, 146: 8941791351667640,
    147: 8941835192205302, 148: 8941872392819226, 149: 8941902931767472, 150: 8941926782448690,
    153: 8941957864155806, 154: 8941954595420724, 155: 8941944429226144, 156: 8941927307685492,
    157: 8941903167237602, 158: 8941871938481652, 159: 8941833545998016, 161: 8941734936895206,
    162: 8941674537516674, 163: 8941606608420918, 164: 8941531040853536, 165: 8941447718620056,
    166: 8941356517781006, 167: 8941257306323958, 169: 8941034280999228, 170: 8940910159434164,
    171: 8940777411010892, 172: 8940635857503634, 173: 8940485310059376, 174: 8940325568653336,
    175: 8940156421503112, 176: 8939977644438114, 177: 8939789000220574, 178: 8939590237814000,
    180: 8939161280500638, 181: 8938930507114326, 182: 8938688456670012, 184: 8938169172285110,
    185: 8937891211977748, 187: 8937296674664432, 188: 8936979233436516, 189: 8936647723807416,
    190: 8936301645088910, 191: 8935940465608202, 192: 8935563620453574, 193: 8935170509012442,
    194: 8934760492279316, 196: 8933886976981030, 197: 8933421980459034, 198: 8932937075281380,
    199: 8932431380068266, 200: 8931903952381602, 201: 8931353783488908, 202: 8930779792568492,
    203: 8930180820284952, 205: 8928902858099222, 207: 8927508759808348, 209: 8925985581394242,
    210: 8925170956711904, 212: 8923424978364230, 213: 8922488798157886, 214: 8921506910578770,
    215: 8920476321224196, 217: 8918255611967910, 218: 8917057947558148, 219: 8915796407299442,
    220: 8914466183841290, 221: 8913061953535784, 222: 8911577804662434, 223: 8910007153233212,
    226: 8904698044465300, 227: 8902698212389652, 228: 8900564669414922, 229: 8898283908495804,
    230: 8895840484961220, 231: 8893216652275640, 232: 8890391911743352, 233: 8887342451323378,
    234: 8884040440144924, 236: 8876541723776518, 237: 8872259855113102, 238: 8867551668208538,
    240: 8856568902200012, 241: 8850106784293916, 242: 8842831740745002, 243: 8834575940248166,
    244: 8825120832349124, 245: 8814176156651890, 246: 8801347484544986, 247: 8786084197194146,
    250: 8715480686119910, 251: 8676850260251934, 252: 8623083654098352, 253: 8542525795804796,
    254: 8406823688997808,
}


def round_half_even(x):
    return int(x.to_integral_value()) if isinstance(x, Decimal) else int(round(x))


def normal_tables():
    pdf = lambda x: (lambda y: NORMAL_EXP_ROUNDING.get(y, y))(math.exp(-0.5 * x * x))
    r, v, scale = float(NORMAL_R), NORMAL_V, 2.0 ** 52
    x = [0.0] * 256
    x[255] = r
    for i in range(255, 1, -1):
        x[i - 1] = math.sqrt(-2.0 * math.log(pdf(x[i]) + v / x[i]))
    k = [0] + [round_half_even(x[i - 1] / x[i] * scale) for i in range(1, 256)]
    k[0] = round_half_even(r * pdf(r) / v * scale)
    w = [v / pdf(r) / scale] + [x[i] / scale for i in range(1, 256)]
    f = [1.0] + [pdf(x[i]) for i in range(1, 256)]
    return k, w, f


def exponential_tables():
    getcontext().prec = 60
    r = Decimal(EXPONENTIAL_R)
    v = (r + 1) * (-r).exp()
    scale = Decimal(2) ** 53
    x = [Decimal(0)] * 256
    x[255] = r
    for i in range(255, 1, -1):
        x[i - 1] = -((-x[i]).exp() + v / x[i]).ln()
    k = [round_half_even(r * (-r).exp() / v * scale), 0]
    k += [round_half_even(x[i - 1] / x[i] * scale) for i in range(2, 256)]
    k = [EXPONENTIAL_K_MEASURED.get(i, k[i]) for i in range(256)]
    w = [float(v / (-r).exp() / scale)] + [float(x[i] / scale) for i in range(1, 256)]
    f = [1.0] + [float((-x[i]).exp()) for i in range(1, 256)]
    return k, w, f


def log_factorials(n=126):
    getcontext().prec = 60
    return [0.0, 0.0] + [float(Decimal(math.factorial(k)).ln()) for k in range(2, n)]


# --- measuring NumPy's tables through crafted PCG64 states ---------------------------------

PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341
M128 = (1 << 128) - 1


def state_before_output(word, inc):
    """A PCG64 state whose next 64-bit output is `word` (NumPy steps, then outputs)."""
    rot = 5  # any rotation works; the output is rotr(hi ^ lo, hi >> 58)
    hi = (rot << 58) | 0x123456789AB
    rotl = ((word << rot) | (word >> (64 - rot))) & ((1 << 64) - 1)
    lo = hi ^ rotl
    after = (hi << 64) | lo
    return ((after - inc) * pow(PCG_MULT, -1, 1 << 128)) & M128


def words_consumed(np, method, word):
    inc = 0xDA3E39CB94B95BDB853C3ED7B71E0F41 | 1
    bg = np.random.PCG64()
    bg.state = {"bit_generator": "PCG64", "state": {"state": state_before_output(word, inc), "inc": inc},
                "has_uint32": 0, "uinteger": 0}
    start = bg.state["state"]["state"]
    value = getattr(np.random.Generator(bg), method)()
    s, n = start, 0
    while s != bg.state["state"]["state"]:
        s = (s * PCG_MULT + inc) & M128
        n += 1
    return n, value


def probe(np, method, word_of, bits):
    """For each layer: the smallest integer with which `method` reads more than one word, and
    the scale w (the value returned for the integer 1, or 2 for layers that never accept 1)."""
    bounds, scales = [], []
    for idx in range(256):
        lo, hi = 0, 1 << bits
        while lo < hi:
            mid = (lo + hi) // 2
            if words_consumed(np, method, word_of(idx, mid))[0] > 1:
                hi = mid
            else:
                lo = mid + 1
        bounds.append(lo)
        scales.append(None if lo <= 1 else abs(words_consumed(np, method, word_of(idx, 1))[1]))
    return bounds, scales


def probe_numpy():
    import numpy as np
    normal_word = lambda idx, rabs: (rabs << 9) | idx             # sign bit 0
    exponential_word = lambda idx, ri: (ri << 11) | (idx << 3)
    nk, nw = probe(np, "standard_normal", normal_word, 52)
    ek, ew = probe(np, "standard_exponential", exponential_word, 53)
    return np.__version__, (nk, nw), (ek, ew)


def check_against_numpy(write_measured):
    version, (nk, nw), (ek, ew) = probe_numpy()
    k, w, _ = normal_tables()
    bad = [i for i in range(256) if nk[i] != k[i] or (nw[i] is not None and nw[i] != w[i])]
    print(f"NumPy {version}: normal tables differ at layers {bad}")
    k, w, _ = exponential_tables()
    kdiff = {i: ek[i] for i in range(256) if ek[i] != k[i]}
    wbad = [i for i in range(256) if ew[i] is not None and ew[i] != w[i]]
    print(f"NumPy {version}: exponential w differs at {wbad}; k differs at {len(kdiff)} layers")
    if write_measured:
        global EXPONENTIAL_K_MEASURED
        EXPONENTIAL_K_MEASURED = {**EXPONENTIAL_K_MEASURED, **kdiff}
        src = open(__file__).read()
        start = src.index("EXPONENTIAL_K_MEASURED = {")
        end = src.index("}\n", start) + 2  # the dict ends at the first "}" closing a line
        items = [f"{i}: {v}," for i, v in sorted(EXPONENTIAL_K_MEASURED.items())]
        rows = ["    " + " ".join(items[j:j + 4]) for j in range(0, len(items), 4)]
        with open(__file__, "w") as fh:
            fh.write(src[:start] + "EXPONENTIAL_K_MEASURED = {\n" + "\n".join(rows) + "\n}\n" + src[end:])
        print(f"recorded {len(kdiff)} measured bounds in {__file__}")
    return not bad and not wbad and (write_measured or not kdiff)


# --- output ----------------------------------------------------------------------------------

def c_array(ctype, name, values, fmt):
    lines, row = [], []
    for v in values:
        row.append(fmt(v))
        if len(row) == 3:
            lines.append("    " + ", ".join(row) + ",")
            row = []
    if row:
        lines.append("    " + ", ".join(row) + ",")
    return f"inline constexpr {ctype} {name}[{len(values)}] = {{\n" + "\n".join(lines) + "\n};\n"


def write_header():
    nk, nw, nf = normal_tables()
    ek, ew, ef = exponential_tables()
    lf = log_factorials()
    hexu = lambda v: f"0x{v:016X}ull"
    dbl = lambda v: float.hex(v)
    body = [
        "// Generated by scripts/gen_random_tables.py — do not edit. The tables of NumPy's",
        "// Generator samplers, equal bit for bit to NumPy's (see the script for how each is made).",
        "#pragma once",
        "",
        "#include <cstdint>",
        "",
        "namespace kiln_random {",
        "namespace tables {",
        "",
        "/// Standard normal ziggurat: tail start r, its reciprocal, and the 256 layers (52-bit).",
        f"inline constexpr double normal_r = {dbl(float(NORMAL_R))};",
        f"inline constexpr double normal_inv_r = {dbl(1.0 / float(NORMAL_R))};",
        c_array("std::uint64_t", "normal_k", nk, hexu),
        c_array("double", "normal_w", nw, dbl),
        c_array("double", "normal_f", nf, dbl),
        "/// Standard exponential ziggurat: tail start r and the 256 layers (53-bit).",
        f"inline constexpr double exponential_r = {dbl(float(EXPONENTIAL_R))};",
        c_array("std::uint64_t", "exponential_k", ek, hexu),
        c_array("double", "exponential_w", ew, dbl),
        c_array("double", "exponential_f", ef, dbl),
        "/// log(k!) for k = 0..125, correctly rounded.",
        c_array("double", "log_factorial", lf, dbl),
        "}  // namespace tables",
        "}  // namespace kiln_random",
        "",
    ]
    with open(OUT, "w") as fh:
        fh.write("\n".join(body))
    print(f"wrote {os.path.relpath(OUT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--probe-numpy", action="store_true", help="check the tables against the installed NumPy")
    ap.add_argument("--write-measured", action="store_true", help="with --probe-numpy: record NumPy's exponential k bounds in this script")
    args = ap.parse_args()
    if args.probe_numpy and not check_against_numpy(args.write_measured):
        sys.exit(1)
    write_header()


if __name__ == "__main__":
    main()
