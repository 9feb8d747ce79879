"""Tools for lab authors: the lab's own checks (`lint`), a new lab's skeleton (`scaffold`), and the
documentation generated from every lab's declaration (`docs`). Nothing here runs while grading.
"""
