# SPDX-License-Identifier: BSD-3-Clause
"""The pieces of scripts/gen-reference: one module per generated page kind."""
