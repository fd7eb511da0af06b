"""Test fixture: the config class of a model that ships its own code (like DNABERT-2, whose
config subclasses transformers' BertConfig under the same class name)."""

from transformers import BertConfig as TransformersBertConfig


class BertConfig(TransformersBertConfig):
    def __init__(self, alibi_starting_size: int = 64, **kwargs):
        self.alibi_starting_size = alibi_starting_size
        super().__init__(**kwargs)
