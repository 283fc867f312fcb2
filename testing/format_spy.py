"""``FORMAT_SPY``: Python source for a test's child process that lists, in
``compiled``, the name of every op whose declarative assembly format xDSL
compiles from then on (``FormatProgram.from_str`` wrapped): what the tests
of the deferred format compilation (``dialects/op_definition.py``) and of
what a compile loads (``tests/test_startup.py``) count."""

FORMAT_SPY = (
    "from xdsl.irdl.declarative_assembly_format import FormatProgram\n"
    "compiled = []\n"
    "real = FormatProgram.from_str\n"
    "def spy(text, op_def):\n"
    "    compiled.append(op_def.name)\n"
    "    return real(text, op_def)\n"
    "FormatProgram.from_str = staticmethod(spy)\n"
)
