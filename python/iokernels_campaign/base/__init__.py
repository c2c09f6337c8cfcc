# SPDX-License-Identifier: BSD-3-Clause
"""The floor: what every room may use and that uses no other room: the
command line's file arguments checked and shown (paths), signals handled as
Ctrl-C is (interrupt), the process's limits (ulimit -v, -f) named when they
stop it (limits), optional packages and the extra that brings each (extras).

Rooms (tests/test_layering.py checks them): base <- store, spec, trace;
spec <- run, report; store <- run; run, report <- tune; all <- the command line."""
