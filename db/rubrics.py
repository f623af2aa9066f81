"""The human rating rubrics the papers validated their metrics with, verbatim.

Rating tasks offer them as presets; the demo's simulated raters use the MHALO one.
"""

from __future__ import annotations

# MHALO appendix B.2, Table 4 ("Scoring criteria for human labeling"), verbatim.
MHALO_TABLE_4 = {
    "1": "Completely incorrect labeling of the hallucination interval. The marked interval either doesn't "
    "correspond to the actual hallucination or completely misses it, including falsely labeling "
    "non-hallucination as a hallucination.",
    "2": "Partially correct labeling. The marked interval covers part of the hallucination but misses other "
    "parts or inaccurately identifies the boundaries. There are notable errors, but some correct areas "
    "are included.",
    "3": "Mostly accurate labeling. The marked interval is mostly correct with only minor errors, such as "
    "slight inaccuracies in boundary detection or very small areas missed.",
    "4": "Completely accurate and fine-grained labeling. The hallucination interval is marked precisely "
    "with no misjudgments or omissions, correctly identifying the smallest details that need "
    "modification.",
}

# Tri-HE appendix F, Table 9 ("Detailed human evaluation instructions"): 5 = no hallucination.
TRI_HE_TABLE_9 = {
    "1": "1) The text is totally hallucinated, and is irrelevant to the given input image and question; "
    "or 2) the text is very hard to understand.",
    "2": "Most of the given responses are hallucinated, yet few sentences of them (one or two) are related "
    "to the given image and question.",
    "3": "Half of the sentences in the given response are hallucinated.",
    "4": "Most of the sentences in the generated response are not hallucinated.",
    "5": "No hallucination exists in the generated response.",
}
