"""Cross-ISA defect mining (`hpmkit compare`): the method of Wu et al., "Cross-architecture
Kernel Performance Evaluation and Defect Mining: RISC-V vs. ARM64", and more.

Pipeline: ContextTable (contexts.py; from profiles via adapter.from_profile) -> contexts()
-> analyse.run() (match.py, detect.py) -> summary.to_dict() -> text / html reports.
"""
from .contexts import ContextTable, contexts

__all__ = ["ContextTable", "contexts"]
