"""Files shipped verbatim into every released folder (not secret; see `release.copy_student_files`):
`_instruments.py`, the notebooks' instrument toolkit (ipywidgets controls over the student's own
functions). A package so a non-editable install carries them."""
