"""File formats Spanlight reads and writes: one module per format behind one interface.

``formats.registry`` lists them all and guesses a file's format; ``db.transfer`` runs a whole
import (read, check images, write in one transaction) or export for the CLI and the pages.
"""
