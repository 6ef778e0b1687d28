"""The gradcli grammar (gradcli.lark), shipped inside the wheel as gradcli.grammar."""
