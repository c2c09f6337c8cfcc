# SPDX-License-Identifier: BSD-3-Clause
"""The results store: one SQLite file (store) and the JSON record of a
run as its columns (record). May use: base."""
