"""One module per language server nav runs; :mod:`lsp.registry` holds the table of them."""
