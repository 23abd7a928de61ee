"""The build step pyproject.toml cannot declare: the wheel gets the bot's gettext
catalogs compiled (``telegram_bot/locales/*/LC_MESSAGES/*.po`` -> ``.mo``, as
``pybabel compile`` does), so ``pip install .`` gives a bot that can speak.
Everything else about the package is in pyproject.toml."""

from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from setuptools import setup
from setuptools.command.build_py import build_py

LOCALES = Path("telegram_bot", "locales")


class BuildPyWithCatalogs(build_py):
    """``build_py``, then each ``.po`` compiled next to its copy in the build."""

    def run(self) -> None:
        super().run()
        for po in sorted(LOCALES.glob("*/LC_MESSAGES/*.po")):
            mo = Path(self.build_lib, po.with_suffix(".mo"))
            mo.parent.mkdir(parents=True, exist_ok=True)
            with po.open("rb") as source:
                catalog = read_po(source, locale=po.parts[-3], domain=po.stem)
            with mo.open("wb") as target:
                write_mo(target, catalog)  # fuzzy entries left out, like pybabel

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        compiled = [
            str(Path(self.build_lib, po.with_suffix(".mo")))
            for po in sorted(LOCALES.glob("*/LC_MESSAGES/*.po"))
        ]
        return [*super().get_outputs(include_bytecode), *compiled]


setup(cmdclass={"build_py": BuildPyWithCatalogs})
