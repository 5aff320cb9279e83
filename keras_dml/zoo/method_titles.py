"""The long name of each training method on the zoo's model cards (with the paper and year).

`training/publish_zoo.py` writes it into a card's description; a method without an entry (a
plug-in) gets its registered one-line description instead.
"""

METHOD_TITLES = {
    "baseline": "Single-embedding baseline",
    "dc": "Divide & Conquer (CVPR 2019)",
    "hdc": "Hierarchical Divide & Conquer with learned soft masks (TPAMI)",
    "bier": "BIER / A-BIER (TPAMI 2020)",
    "abe": "ABE, attention-based ensemble (ECCV 2018)",
    "mheads": "M-heads (ABE's baseline, ECCV 2018)",
    "dcml": "DCML, deep compositional metric learning (CVPR 2021)",
}
