# SPDX-License-Identifier: BSD-3-Clause
"""What the results say: cases and medians (aggregate), statistics and
verdicts (verdict), pandas frames (frame), terminal tables (tables), figures
(plots, palette), the HTML page (html_report, templates/) written aside and
moved into place (staged). May use: base, spec. Never run: a report is drawn
from stored runs, not by running."""
