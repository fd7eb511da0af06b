"""The cross-species transfer study's library: orthologs, held-out fits and site-run folders.

Reached by no rule, only by benchmarks/cross_species_orthologs.py, rescorer_cards.py,
shipped_rescorers.py, whole_region_transfer.py and their tests (issue 47: the product's sites/
holds only what its rules run)."""
