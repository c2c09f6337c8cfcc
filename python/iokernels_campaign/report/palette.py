# SPDX-License-Identifier: BSD-3-Clause
"""One name, one colour, one place in the order, in every figure, table and
CSV of a report: a series (backend and variant, "mpiio coll") is named with
the words an I/O person uses, coloured by its backend from a fixed
colour-blind-safe palette (Okabe and Ito's), and told apart within a
backend by hatch and line style keyed by the variant's words, never by the
order in which series happen to appear."""

import zlib

# swept option values as the words an I/O person uses
WORDS = {
    "independent=off": "coll",
    "independent=on": "indep",
    "io-type=coll": "coll",
    "io-type=ind": "indep",
    "io-type=indep": "indep",
}

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the
# common colour-vision deficiencies. Backends in their order in reports.
BACKENDS = {
    "mpiio": "#0072B2",  # blue
    "pnetcdf": "#E69F00",  # orange
    "hdf5": "#009E73",  # bluish green
    "netcdf4": "#CC79A7",  # reddish purple
    "adios2": "#D55E00",  # vermillion
    "null": "#999999",  # grey
}
OTHER = ("#56B4E9", "#F0E442", "#000000")  # sky blue, yellow, black: other backends

# a variant's look within its backend's colour: (hatch, line style, marker)
PLAIN = ("", "-", "o")
VARIANT_STYLES = {"": PLAIN, "coll": PLAIN, "indep": ("//", "--", "s")}
MORE_STYLES = (("..", ":", "^"), ("xx", "-.", "D"), ("\\\\", (0, (5, 1)), "v"), ("++", "-", "P"))


def series_name(backend, variant):
    """'mpiio coll' rather than 'mpiio independent=off'."""
    words = [WORDS.get(t, t) for t in (variant or "").split()]
    return " ".join([backend, *words])


def split(series):
    """(backend, variant words) of a series name."""
    backend, _, variant = series.partition(" ")
    return backend, variant


def colour(series):
    """The series' backend's colour."""
    backend, _ = split(series)
    if backend in BACKENDS:
        return BACKENDS[backend]
    return OTHER[zlib.crc32(backend.encode()) % len(OTHER)]


def style(series):
    """(hatch, line style, marker) of the series' variant: plain for none or
    collective, hatched and dashed for independent, others by their words."""
    _, variant = split(series)
    if variant in VARIANT_STYLES:
        return VARIANT_STYLES[variant]
    return MORE_STYLES[zlib.crc32(variant.encode()) % len(MORE_STYLES)]


def order_key(series):
    """Backends in the palette's order, then their variants by name."""
    backend, variant = split(series)
    known = list(BACKENDS)
    return (known.index(backend) if backend in known else len(known), backend, variant)


def ordered(names):
    return sorted(dict.fromkeys(names), key=order_key)
