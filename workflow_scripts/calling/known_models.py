"""Published SpliceAI-family checkpoints errorseq recognises by sha256: what each was trained on.

A base model's weights say nothing of the species they were trained on; the published files do,
by their checksums. Provenance names the family of any file (model_files.py) and, for these,
the model and its training species. Checksums: SpliceAI 1.3.1's `spliceai/models/*.h5` (PyPI)
and OpenSpliceAI's `models/openspliceai-<species>/10000nt/*.pt` at commit 394109a.
"""

from __future__ import annotations

HUMAN, ARABIDOPSIS, HONEYBEE = "Homo sapiens", "Arabidopsis thaliana", "Apis mellifera"
SPLICEAI_10K = {
    "e1fd5adcef7489d604b10e79c40078ef790d51ef048c4ce3869c9119ac5de42b": "spliceai1.h5",
    "6ab042b82ab966b6d3582cb31b96f0859ea08a864f168d69e83aa14450a3b66e": "spliceai2.h5",
    "e2e790bde53dfdf410c6dc434a86122a7d12f3f38dc2ef45d85986e9ecf22fad": "spliceai3.h5",
    "ca88ac9e58e69ba6fdeed319b72f063f164c9abf7392eaccef903e94c1d99dd6": "spliceai4.h5",
    "791cd22c62a80a08d2ca674615a93ce8159d7b55bd157cfef2983b1bd6b41391": "spliceai5.h5",
}
OPENSPLICEAI_10K = {  # (species folder, file); rs11 and rs14 of arabidopsis are the same bytes
    "64e3611e51b6b4d7d88f7e06d65270b904aae6455267dd5a745a788996f50c3d": ("arabidopsis", "rs10"),
    "8275618fdedccd959f7e80feba0c3489c76676299210e44035d7ecba0b9ee0b2": ("arabidopsis", "rs11 = rs14"),
    "de0c9a27281a04716f50223eca1928db938e16633e320cf28ed03523280ea4ac": ("arabidopsis", "rs12"),
    "ff48e89f82f9cb0bd8c2367cba1b9fb9aed7f22e4c4d85a99d21b1879de98ba7": ("arabidopsis", "rs13"),
    "49a9535d7e5c29f58755839e0227f0a8d79110b54c2bf70a162c441367e430a3": ("honeybee", "rs10"),
    "495292add2d6464b1e8208171d58e5d0c5014375aab4d5a082154511d43e85ae": ("honeybee", "rs11"),
    "a1552580f24257f01a8bf00022c8a1a6439bfb08badd1d813625e532a3b5a440": ("honeybee", "rs12"),
    "630a3706c42c3d73bf9fa7bf99b21c702394f7ae3818dfa164a6d955c8b1b7bf": ("honeybee", "rs13"),
    "feee97ada26621616ef574ebff23606f080eb1cb25992548388680c43289f2db": ("honeybee", "rs14"),
    "7b0d6af6239e27392226bbada310ee9e2ce0ced149fb6fdff8996c12cba3cc85": ("mane", "rs10"),
    "38fe4469eff09ffe5caa291bc224248c81ed68acca0b729afb87450909a8130e": ("mane", "rs11"),
    "49f38e3fd0e87b81ce22d986d1168eb9b2c55668bfd6aaa064da1082ee668667": ("mane", "rs12"),
    "bae2756b452f31d45b74604816561da79284d791be37f467491a68342c819b20": ("mane", "rs13"),
    "cfe2741311ed02dab3042492a5be14029b18d63be693751e9534315a9e4c6271": ("mane", "rs14"),
}
OPENSPLICEAI_SPECIES = {"arabidopsis": ARABIDOPSIS, "honeybee": HONEYBEE, "mane": HUMAN}


def known_model(sha256: str) -> dict | None:
    """{"model", "species", "flank"} of a published checkpoint, or None."""
    if sha256 in SPLICEAI_10K:
        return {"model": f"SpliceAI-10k {SPLICEAI_10K[sha256]}", "species": HUMAN, "flank": 10_000}
    if sha256 in OPENSPLICEAI_10K:
        folder, seed = OPENSPLICEAI_10K[sha256]
        species = OPENSPLICEAI_SPECIES[folder]
        return {"model": f"OpenSpliceAI {folder} 10000nt {seed}", "species": species, "flank": 10_000}
    return None


def describe_weights(files: list[dict], family: str) -> dict:
    """Provenance of an ensemble from its FileFacts (path, bytes, sha256): family, training
    species and flank where the files are known, and the files that are byte-for-byte copies."""
    known = [known_model(fact["sha256"]) for fact in files]
    species = sorted({fact["species"] for fact in known if fact})
    flanks = sorted({fact["flank"] for fact in known if fact})
    by_digest: dict[str, list[str]] = {}
    for fact in files:
        by_digest.setdefault(fact["sha256"], []).append(fact["path"])
    return {
        "family": family,
        "species": "unknown" if not all(known) else (species[0] if len(species) == 1 else "mixed"),
        "flank": flanks[0] if len(flanks) == 1 and all(known) else "unknown",
        "models": [fact["model"] if fact else None for fact in known],
        "identical_files": [paths for paths in by_digest.values() if len(paths) > 1],
        "distinct_models": len(by_digest),
    }
