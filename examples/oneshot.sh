#!/usr/bin/env sh
# One-shot workflows: each line is a complete question to gradcli.
set -e
gradcli grad "(x**2 * y.sin()).sum()" --at x=[1,2,3] --at y=0.5
gradcli grad "x @ W @ x" --at "x=ones(3)" --at W="eye(3) * 2" --wrt x
gradcli grad "x.sin()" --at x=[0.0,1.0] --jacobian
gradcli grad "(x**3 * y).sum()" --at x=[1.,2.] --at y=3.0 --hessian
gradcli grad "x * x" --at x=[1.,2.] --seed-grad "[1.0, 10.0]"
gradcli grad "x.tanh().sum()" --at x=[0.5,-1] --check
gradcli grad "(x * y).sum()" --at x=[1.,2.] --at y=3.0 --explain
gradcli graph "(x @ x).tanh()" --at x="ones(2,2)" --format mermaid
