"""File formats Spanlight reads and writes: one module per format behind one interface.

``db.formats.registry`` lists them all and guesses a file's format; ``db.formats.transfer`` runs a whole
import (read, check images, write in one transaction) or export for the CLI and the pages.
"""
