# SPDX-License-Identifier: BSD-3-Clause
"""Darshan logs read (darshan_log) and turned into replay files
(trace2replay). May use: base."""
