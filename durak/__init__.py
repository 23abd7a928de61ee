"""The product's console: the ``durak`` command (:mod:`durak.cli`)."""
