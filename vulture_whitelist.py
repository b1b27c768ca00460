"""What vulture (dead code, `make lint` and `make test`) cannot see being used: names that a framework
calls or reads, and the arguments a callback's signature must have. Never run, only read by vulture;
`[tool.vulture]` in pyproject.toml also ignores functions under FastAPI's route and exception-handler
decorators, pydantic's validators and pytest's fixtures. Add a name here only with what uses it."""

# ruff: noqa: B018, F821

# torch.nn.Module: called through __call__ and repr
_.forward
_.extra_repr
_.dropout2  # model.py replaces nn.TransformerEncoderLayer's own dropout modules; its forward reads them

# Lightning hooks (LightningModule, LightningDataModule, Callback, CheckpointIO) and what they receive
_.training_step
_.validation_step
_.train_dataloader
_.val_dataloader
_.on_after_batch_transfer
_.on_train_start
_.on_train_epoch_start
_.on_train_epoch_end
_.on_validation_start
_.on_train_end
_.on_exception
_.on_save_checkpoint
_.save_checkpoint
_.should_stop  # Trainer.should_stop, set by a callback to end the fit
batch_idx
dataloader_idx
storage_options

# http.server's request handler: what it calls to log a request (the local package index of tests/setup)
_.log_message

# MLflow pyfunc: the loader module's entry point and PythonModel's raw model
_load_pyfunc
_.get_raw_model

# PettingZoo's AEC environment API
_.observation_space
_.observe
_.render

# MkDocs hooks (mkdocs.yml `hooks:`)
on_page_markdown

# what a library calls or reads: tqdm's display(msg, pos), ruamel.yaml's round-trip, Optuna's study
_.display
pos
_.preserve_quotes
_.sampler

# signal handlers take (signum, frame)
signum
frame

# pydantic fields read by key (pipeline/sl/fitting.py reads the section as a dict)
_.card_logit_c

# tests: fixtures asked for their side effect, module marks, a patched function's signature, a tqdm clock,
# Selenium's options, pytest's hooks
no_sources
mlflow_store
local_ray
pytestmark
including_emulation
_.start_t
_.binary_location
pytest_configure
pytest_addoption
pytest_collection_modifyitems
pytest_runtest_logreport
pytest_sessionfinish
