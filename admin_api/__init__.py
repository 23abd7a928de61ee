"""Flask admin API for operators (placeholder).

Planned: an application factory ``create_app(test_config=None)`` with blueprints,
JSON errors and token auth, talking to the same table service as the bot. The
Procfile's ``web`` entry expects that factory.
"""
