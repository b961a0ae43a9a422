"""The models that ship inside the package, in one registry: for each kind (ImpScore models, interpreters) the
folder that holds them, the default, and the environment variable that names another default. Every command and
loader finds a packaged model or a model folder through :meth:`PackagedModels.locate`, and lists the names through
:meth:`PackagedModels.names`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
MARKER = "config.json"  # every model folder, packaged or not, has one


@dataclass(frozen=True)
class PackagedModels:
    kind: str  # what the models are, as messages name them
    folder: Path  # where the packaged ones live
    default: str  # the one used when none is named and ``env`` is unset
    env: str  # names the model used when none is given

    def names(self) -> list[str]:
        """The packaged models' names, sorted."""
        if not self.folder.is_dir():
            return []
        return sorted(p.name for p in self.folder.iterdir() if (p / MARKER).is_file())

    def default_name(self) -> str:
        """The model used when none is named: ``$env`` when set, else ``default``."""
        return os.environ.get(self.env) or self.default

    def locate(self, name_or_path: str | os.PathLike | None) -> Path | None:
        """The folder of a model folder path or a packaged name (None: :meth:`default_name`); None when neither."""
        name = self.default_name() if name_or_path is None else name_or_path
        path = Path(name).expanduser()
        if (path / MARKER).is_file():
            return path
        packaged = self.folder / str(name)
        return packaged if (packaged / MARKER).is_file() else None


IMPSCORE = PackagedModels("ImpScore model", PACKAGE / "impscore" / "models", "impscore-minilm-general-ft",
                          "PRAGMETER_IMPSCORE")
INTERPRETERS = PackagedModels("interpreter", PACKAGE / "interpreter" / "models", "interpreter-mpnet-situated-figures-v3",
                              "PRAGMETER_INTERPRETER")
REGISTRY = {"impscore": IMPSCORE, "interpreter": INTERPRETERS}
