/*
 * tfsql/duckdb_ext/decimals.c -- the exactness rule of decimals and float_list
 * (docs/format.md, section 8), both ways, as DuckDB lays a DECIMAL(width, scale) out
 * (int16, int32, int64 or a hugeint by width):
 *
 *   reading: a float32 read as DECIMAL(width, scale) is the decimal nearest it, kept only
 *            when it converts back to the same float32 (the rule tfsql.casting applies
 *            with Arrow's casts)                         -> store_decimal, decimal_double
 *   writing: a DECIMAL value is written as the float32 nearest it, only when reading that
 *            float32 back as the same decimal type gives the same value (the rule
 *            tfsql.feature_buffers applies)             -> decimal_float (COPY ... TO)
 *
 * Integer arithmetic only (a few hundred bits) and correctly rounded text conversions
 * (strtof / strtod), so no double rounding: 12.34 as DECIMAL(10,2) is written as the
 * float32 12.3400002 and reads back 12.34; 123456789.12 as DECIMAL(11,2) is refused
 * (float32 holds about 7 significant digits).
 */

#include "ext_common.h"

#define LIMBS 12 /* 384 bits: 24-bit mantissa * 10^38 * 2^104 fits */

typedef struct {
    uint32_t d[LIMBS]; /* little-endian */
} big;

static void big_set(big *x, uint64_t v) {
    memset(x, 0, sizeof(*x));
    x->d[0] = (uint32_t)v;
    x->d[1] = (uint32_t)(v >> 32);
}

static void big_mul(big *x, uint32_t m) {
    uint64_t carry = 0;
    for (int i = 0; i < LIMBS; i++) {
        uint64_t v = (uint64_t)x->d[i] * m + carry;
        x->d[i] = (uint32_t)v;
        carry = v >> 32;
    }
}

static void big_pow10(big *x, int n) { /* x *= 10^n */
    for (; n >= 9; n -= 9) {
        big_mul(x, 1000000000u);
    }
    static const uint32_t small[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    big_mul(x, small[n]);
}

static void big_shl(big *x, int bits) {
    int words = bits / 32, rest = bits % 32;
    for (int i = LIMBS - 1; i >= 0; i--) {
        uint64_t hi = i - words >= 0 ? x->d[i - words] : 0;
        uint64_t lo = i - words - 1 >= 0 ? x->d[i - words - 1] : 0;
        x->d[i] = rest ? (uint32_t)((hi << rest) | (lo >> (32 - rest))) : (uint32_t)hi;
    }
}

static int big_bit(const big *x, int i) { return i >= 0 && i < 32 * LIMBS && (x->d[i / 32] >> (i % 32)) & 1; }

static int big_cmp(const big *a, const big *b) {
    for (int i = LIMBS - 1; i >= 0; i--) {
        if (a->d[i] != b->d[i]) {
            return a->d[i] < b->d[i] ? -1 : 1;
        }
    }
    return 0;
}

static void big_add1(big *x) {
    for (int i = 0; i < LIMBS && ++x->d[i] == 0; i++) {
    }
}

/* x >> bits, rounded to nearest, ties to even (word by word: once per value read or
 * written). */
static void big_shr_round(big *x, int bits) {
    int round_up = 0;
    if (bits > 0 && big_bit(x, bits - 1)) { /* at least half: more, or odd, rounds up */
        int below = bits - 1, more = 0;
        for (int i = 0; i < below / 32 && i < LIMBS && !more; i++) {
            more = x->d[i] != 0;
        }
        if (!more && below / 32 < LIMBS && below % 32 != 0) {
            more = (x->d[below / 32] & (((uint32_t)1 << (below % 32)) - 1)) != 0;
        }
        round_up = more || big_bit(x, bits);
    }
    int words = bits / 32, rest = bits % 32;
    for (int i = 0; i < LIMBS; i++) {
        uint64_t lo = i + words < LIMBS ? x->d[i + words] : 0;
        uint64_t hi = i + words + 1 < LIMBS ? x->d[i + words + 1] : 0;
        x->d[i] = rest ? (uint32_t)((lo >> rest) | (hi << (32 - rest))) : (uint32_t)lo;
    }
    if (round_up) {
        big_add1(x);
    }
}

/* Compare q / 10^scale with b * 2^k (all non-negative). */
static int compare_scaled(const big *q, int scale, uint64_t b, int k) {
    big left = *q, right;
    big_set(&right, b);
    big_pow10(&right, scale);
    if (k >= 0) {
        big_shl(&right, k);
    } else {
        big_shl(&left, -k);
    }
    return big_cmp(&left, &right);
}

/* The decimal units (|f| * 10^scale, rounded to nearest, ties to even) of the float32 f,
 * within the width and (when `check_back`) converting back to |f|: 0 with *q, else -1. */
static int decimal_units(float f, int width, int scale, int check_back, big *q) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    int biased = (int)((bits >> 23) & 0xff);
    uint64_t m = bits & 0x7fffff;
    if (biased == 0xff) {
        return -1; /* inf or NaN */
    }
    int e = biased == 0 ? -149 : biased - 150;
    if (biased != 0) {
        m |= 0x800000;
    }
    big_set(q, m);
    if (m == 0) {
        return 0;
    }
    big_pow10(q, scale);
    if (e >= 0) {
        big_shl(q, e);
    } else {
        big_shr_round(q, -e);
    }
    big limit;
    big_set(&limit, 1);
    big_pow10(&limit, width);
    if (big_cmp(q, &limit) >= 0) {
        return -1; /* beyond the width */
    }
    if (!check_back) {
        return 0;
    }
    /* the float32 nearest q / 10^scale is f when q / 10^scale lies inside f's rounding
     * interval, its ends included when f's mantissa is even (ties to even) */
    int even = (m & 1) == 0;
    int hi = compare_scaled(q, scale, 2 * m + 1, e - 1);
    int lo = m == 0x800000 && biased > 1 ? compare_scaled(q, scale, 4 * m - 1, e - 2)
                                         : compare_scaled(q, scale, 2 * m - 1, e - 1);
    return (hi < 0 || (hi == 0 && even)) && (lo > 0 || (lo == 0 && even)) ? 0 : -1;
}

/* x / 10^9 in place; the remainder. */
static uint32_t big_div1e9(big *x) {
    uint64_t rest = 0;
    for (int i = LIMBS - 1; i >= 0; i--) {
        uint64_t v = (rest << 32) | x->d[i];
        x->d[i] = (uint32_t)(v / 1000000000u);
        rest = v % 1000000000u;
    }
    return (uint32_t)rest;
}

/* q's decimal digits, most significant first, without leading zeros ("0" for zero),
 * NUL-terminated in out (at least 128 bytes: q below 10^116); their count. */
static size_t big_digits(big q, char *out) {
    char rev[128];
    size_t n = 0;
    big zero;
    memset(&zero, 0, sizeof(zero));
    do {
        uint32_t group = big_div1e9(&q);
        for (int k = 0; k < 9; k++, group /= 10) {
            rev[n++] = (char)('0' + group % 10);
        }
    } while (big_cmp(&q, &zero) != 0);
    while (n > 1 && rev[n - 1] == '0') {
        n--;
    }
    for (size_t k = 0; k < n; k++) {
        out[k] = rev[n - 1 - k];
    }
    out[n] = '\0';
    return n;
}

/* "-<q>e-<scale>" (or "+..."): the text strtod / strtof read correctly rounded. */
static void scientific_text(int negative, const big *q, int scale, char *text, size_t cap) {
    char digits[128];
    big_digits(*q, digits);
    snprintf(text, cap, "%c%se-%d", negative ? '-' : '+', digits, scale);
}

int decimal_double(float f, int width, int scale, double *out) {
    big q;
    if (width < 1 || width > 76 || scale < 0 || scale > width || decimal_units(f, width, scale, 1, &q)) {
        return -1;
    }
    uint32_t bits;
    memcpy(&bits, &f, 4);
    char text[160];
    scientific_text(bits >> 31, &q, scale, text, sizeof(text));
    *out = strtod(text, NULL);
    return 0;
}

/* The two's complement of the 128-bit value (lower, upper), in place. */
static void negate128(uint64_t *lower, uint64_t *upper) {
    *lower = ~*lower + 1;
    *upper = ~*upper + (*lower == 0);
}

/* The DECIMAL(width, scale) value at index i of DuckDB's storage `data` as its sign (1:
 * negative) and magnitude in units of 10^-scale. */
static int load_units(const void *data, size_t i, int width, big *q) {
    uint64_t lower, upper;
    if (width <= 18) {
        int64_t v = width <= 4 ? ((const int16_t *)data)[i]
                    : width <= 9 ? ((const int32_t *)data)[i]
                                 : ((const int64_t *)data)[i];
        lower = (uint64_t)v;
        upper = v < 0 ? UINT64_MAX : 0;
    } else { /* a hugeint: lower 64 bits, then the upper as signed */
        memcpy(&lower, (const uint8_t *)data + 16 * i, 8);
        memcpy(&upper, (const uint8_t *)data + 16 * i + 8, 8);
    }
    int negative = (upper >> 63) != 0;
    if (negative) {
        negate128(&lower, &upper);
    }
    memset(q, 0, sizeof(*q));
    q->d[0] = (uint32_t)lower;
    q->d[1] = (uint32_t)(lower >> 32);
    q->d[2] = (uint32_t)upper;
    q->d[3] = (uint32_t)(upper >> 32);
    return negative;
}

/* The decimal text of a sign and magnitude at `scale` ("-0.05", "12.30"). */
static void plain_text(int negative, const big *q, int scale, char *out, size_t cap) {
    char digits[128];
    size_t n = big_digits(*q, digits);
    if (scale <= 0) {
        snprintf(out, cap, "%s%s", negative ? "-" : "", digits);
    } else if (n > (size_t)scale) {
        snprintf(out, cap, "%s%.*s.%s", negative ? "-" : "", (int)(n - (size_t)scale), digits,
                 digits + n - (size_t)scale);
    } else { /* 0.<zeros><digits> */
        static const char zeros[] = "0000000000000000000000000000000000000000";
        snprintf(out, cap, "%s0.%.*s%s", negative ? "-" : "", (int)((size_t)scale - n), zeros, digits);
    }
}

int decimal_float(const void *data, size_t i, int width, int scale, float *out, char *value,
                  size_t cap) {
    big q, back;
    int negative = load_units(data, i, width, &q);
    char text[160];
    scientific_text(negative, &q, scale, text, sizeof(text));
    *out = strtof(text, NULL);
    if (width >= 1 && width <= 38 && scale >= 0 && scale <= width &&
        decimal_units(*out, width, scale, 0, &back) == 0 && big_cmp(&back, &q) == 0) {
        /* (*out is the float32 nearest q / 10^scale, so units equal to q convert back) */
        return 0;
    }
    plain_text(negative, &q, scale, value, cap);
    return -1;
}

int store_decimal(float f, int width, int scale, void *data, size_t i) {
    big q;
    if (width < 1 || width > 38 || scale < 0 || scale > width || decimal_units(f, width, scale, 1, &q)) {
        return -1;
    }
    uint64_t lower = (uint64_t)q.d[0] | (uint64_t)q.d[1] << 32;
    uint64_t upper = (uint64_t)q.d[2] | (uint64_t)q.d[3] << 32; /* below 10^38 < 2^127 */
    uint32_t bits;
    memcpy(&bits, &f, 4);
    if (bits >> 31) { /* negative: two's complement of the 128-bit magnitude */
        negate128(&lower, &upper);
    }
    if (width <= 4) {
        ((int16_t *)data)[i] = (int16_t)lower;
    } else if (width <= 9) {
        ((int32_t *)data)[i] = (int32_t)lower;
    } else if (width <= 18) {
        ((int64_t *)data)[i] = (int64_t)lower;
    } else { /* a hugeint: lower 64 bits, then the upper as signed */
        memcpy((uint8_t *)data + 16 * i, &lower, 8);
        memcpy((uint8_t *)data + 16 * i + 8, &upper, 8);
    }
    return 0;
}
