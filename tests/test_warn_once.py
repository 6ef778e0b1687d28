"""PyTorch's once-per-process warnings (TORCH_WARN_ONCE), each side in a fresh process:
given the first time only, every time under torch.set_warn_always(True), not at all where
PyTorch's condition does not hold; and a new `gradcli run` program starts with none given,
as a new Python process does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: each line run in order in one fresh process; the warnings each gives are compared
STEPS = [
    "float(t)", "float(t)", "complex(t)", "torch.tensor([t])", "'%f' % t", "t.item()",
    "int(t)", "torch.set_warn_always(True)", "float(t)", "float(t)", "complex(t)",
    "torch.tensor([[t], [2.]])",
    "with torch.no_grad(): float(t)",
    "torch.autograd.backward((t * t), create_graph=True)",
    "torch.autograd.backward((t * t), create_graph=True)",
    "torch.set_warn_always(False)",
    "torch.autograd.backward((t * t), create_graph=True)",
    "torch.zeros(1).copy_(torch.tensor([1 + 1j]))",
    "torch.zeros(1).copy_(torch.tensor([1 + 1j]))",
]

_SCRIPT = """
import sys, warnings
import {module} as torch
t = torch.tensor(1.5, requires_grad=True)
for step in {steps!r}:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        exec(step)
    print(step, "->", [str(w.message).split(chr(10))[0] for w in seen])
"""


def _run(module: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    done = subprocess.run([sys.executable, "-c", _SCRIPT.format(module=module, steps=STEPS)],
                          capture_output=True, text=True, env=env, cwd=os.path.dirname(__file__),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_once_per_process_warnings_as_pytorch():
    pytest.importorskip("torch")
    ours = _run("gradcli.torch")
    assert ours == _run("torch")
    assert ours.count("Converting a tensor with requires_grad=True") == 5


def test_each_program_starts_with_no_warning_given(tmp_path):
    """Two programs run by one session object (as the test runner and the REPL's :run do):
    each gives the warning once, as each of two Python processes would."""
    from io import StringIO

    from gradcli.lang.session import run_source

    program = "t = torch.tensor(2.0, requires_grad=True)\nfloat(t)\nfloat(t * 3)\nprint('ok')\n"
    for _ in range(2):
        out, err = StringIO(), StringIO()
        assert run_source(program, "p.py", stdout=out, stderr=err) == 0
        assert out.getvalue() == "ok\n"
        assert err.getvalue().count("Converting a tensor with requires_grad=True") == 1


# ------------------------------------------------------------------ the whole table
#: (name, setup, trigger): setup runs once (its warnings ignored) after COMMON; the trigger
#: runs twice, then twice more under torch.set_warn_always(True). Every warning is compared:
#: category, full text, and where it points (the trigger's line, or inside the library: the
#: path of a file of PyTorch's own cannot be the same as gradcli's), and any error raised.
COMMON = "a = torch.randn(3, 4); x = torch.randn(3, requires_grad=True); spd = torch.eye(3) * 2 + 0.1"
TRIGGERS = [
    ('trunc_normal', "", 'nn.init.trunc_normal_(torch.empty(3), mean=10., std=1., a=-2., b=2.)'),
    ('kaiming_zero', "", 'nn.init.kaiming_uniform_(torch.empty(0, 3))'),
    ('kaiming_n_zero', "", 'nn.init.kaiming_normal_(torch.empty(0, 3))'),
    ('upsample', "", 'F.upsample(torch.randn(1,1,2,2), scale_factor=2)'),
    ('upsample_nearest', "", 'F.upsample_nearest(torch.randn(1,1,2,2), scale_factor=2)'),
    ('upsample_bilinear', "", 'F.upsample_bilinear(torch.randn(1,1,2,2), scale_factor=2)'),
    ('index_reduce', "", "torch.zeros(3).index_reduce_(0, torch.tensor([0, 1]), torch.ones(2), 'prod')"),
    ('cov_dof', "", 'torch.cov(torch.randn(2, 1))'),
    ('storage', "", 'a.storage()'),
    ('grid_sample', "", 'F.grid_sample(torch.randn(1,1,3,3), torch.zeros(1,2,2,2))'),
    ('affine_grid', "", 'F.affine_grid(torch.eye(2, 3).unsqueeze(0), [1, 1, 2, 2])'),
    ('affine_grid_unit', "", 'F.affine_grid(torch.eye(2, 3).unsqueeze(0), [1, 1, 1, 2], align_corners=True)'),
    ('resize', "", 'a.resize(12)'),
    ('resize_as', "", 'a.resize_as(torch.zeros(12))'),
    ('softmin_implicit', "", 'F.softmin(a)'),
    ('softmax_implicit', "", 'F.softmax(a)'),
    ('log_softmax_implicit', "", 'F.log_softmax(a)'),
    ('softmax_module', "", 'nn.Softmax()(a)'),
    ('set_prec', "", "torch.set_float32_matmul_precision('bogus')"),
    ('cholesky', "", 'torch.cholesky(spd)'),
    ('triangular_solve', "", 'torch.triangular_solve(torch.ones(3, 1), spd)'),
    ('qr', "", 'torch.qr(spd)'),
    ('cross_nodim', "", 'torch.cross(torch.randn(3, 3), torch.randn(3, 3))'),
    ('chain_matmul', "", 'torch.chain_matmul(spd, spd)'),
    ('lu', "", 'torch.lu(spd)'),
    ('lu_solve', "spd = torch.eye(3) * 2 + 0.1\nimport warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('ignore'); LU, piv = torch.linalg.lu_factor(spd)",
     'torch.lu_solve(torch.ones(3, 1), LU, piv)'),
    ('H_0d', "", 'torch.tensor(1.).H'),
    ('T_3d', "", 'torch.randn(2, 3, 4).T'),
    ('sparse_coo', "", 'torch.sparse_coo_tensor(torch.tensor([[0]]), torch.tensor([1.]), (2,), check_invariants=True)'),
    ('var_dof', "", 'torch.tensor([1.]).var()'),
    ('std_dof', "", 'torch.tensor([1.]).std()'),
    ('padding_same', "", "nn.Conv1d(1, 1, 4, padding='same')(torch.randn(1, 1, 5))"),
    ('scalar_grad', "", 'float(x.sum())'),
    ('meshgrid', "", 'torch.meshgrid(torch.arange(2), torch.arange(3))'),
    ('out_resize', "", 'torch.add(a, a, out=torch.zeros(2))'),
    ('stft_window', "", 'torch.stft(torch.randn(64), 16, return_complex=True)'),
    ('stft_real', "", 'torch.stft(torch.randn(64), 16, window=torch.hann_window(16), return_complex=False)'),
    ('istft_window', 's = torch.stft(torch.randn(64), 16, window=torch.hann_window(16), return_complex=True)',
     'torch.istft(s, 16)'),
    ('mse_size', "", 'F.mse_loss(torch.randn(3, 1), torch.randn(3))'),
    ('l1_size', "", 'F.l1_loss(torch.randn(3, 1), torch.randn(3))'),
    ('mse_module_size', "", 'nn.MSELoss()(torch.randn(3, 1), torch.randn(3))'),
    ('smoothl1_size', "", 'F.smooth_l1_loss(torch.randn(3, 1), torch.randn(3))'),
    ('huber_size', "", 'F.huber_loss(torch.randn(3, 1), torch.randn(3))'),
    ('bce_size', "", 'F.binary_cross_entropy(torch.rand(3), torch.rand(3, 1))'),
    ('kl_mean', "", 'F.kl_div(torch.randn(3), torch.rand(3))'),
    ('size_average', "", 'F.mse_loss(a, a, size_average=False)'),
    ('size_average_mod', "", 'nn.MSELoss(size_average=False)'),
    ('reduce_arg', "", 'nn.CrossEntropyLoss(reduce=False)'),
    ('elementwise_mean', "", "F.mse_loss(a, a, reduction='elementwise_mean')"),
    ('gumbel_eps', "", 'F.gumbel_softmax(a, eps=1e-3)'),
    ('range', "", 'torch.range(0, 3)'),
    ('asarray', "", 'torch.asarray(x)'),
    ('anomaly', "", 'torch.autograd.set_detect_anomaly(True); torch.autograd.set_detect_anomaly(False)'),
    ('anomaly_ctx', "", 'with torch.autograd.detect_anomaly(): pass'),
    ('gradcheck_float', "", 'torch.autograd.gradcheck(lambda t: t * 2, (torch.randn(2, requires_grad=True),), eps=1e-2, atol=1e-2)'),
    ('volatile_get', "", 'a.volatile'),
    ('volatile_set', "", 'a.volatile = True'),
    ('nonleaf_grad', "", '(x * 2).grad'),
    ('complex_copy', "", 'torch.zeros(1).copy_(torch.tensor([1 + 1j]))'),
    ('dropout2d_2d', "", 'F.dropout2d(torch.randn(2, 3))'),
    ('dropout2d_3d', "", 'F.dropout2d(torch.randn(2, 3, 4))'),
    ('dropout3d_2d', "", 'F.dropout3d(torch.randn(2, 3))'),
    ('nll2d', "", 'nn.NLLLoss2d()'),
    ('rnn_dropout', "", 'nn.RNN(2, 2, dropout=0.5)'),
    ('init_old', "", 'nn.init.normal(torch.empty(3))'),
    ('clip_grad_norm_old', 'p = torch.randn(3, requires_grad=True); p.grad = torch.ones(3)',
     'torch.nn.utils.clip_grad_norm(p, 1.0)'),
    ('weight_norm', "", 'torch.nn.utils.weight_norm(nn.Linear(2, 2))'),
    ('checkpoint_nograd', "import importlib; ck = importlib.import_module(torch.__name__ + '.utils.checkpoint')",
     'ck.checkpoint(lambda t: t * 2, torch.randn(2), use_reentrant=True)'),
    ('checkpoint_noreentrant', "import importlib; ck = importlib.import_module(torch.__name__ + '.utils.checkpoint')",
     'ck.checkpoint(lambda t: t * 2, torch.randn(2, requires_grad=True))'),
    ('make_tensor_lowhigh', "import importlib; tt = importlib.import_module(torch.__name__ + '.testing')",
     "tt.make_tensor((2,), dtype=torch.float32, device='cpu', low=1., high=1.)"),
    ('F_sigmoid', "", 'F.sigmoid(a)'),
    ('F_tanh', "", 'F.tanh(a)'),
    ('tensor_of_tensor', "", 'torch.tensor(a)'),
    ('tensor_of_grad_tensor', "", 'torch.tensor(x)'),
    ('variable', "", 'torch.autograd.Variable(a)'),
    ('norm_deprec', "", "torch.norm(a, p='nuc')"),
    ('norm_plain', "", 'torch.norm(a)'),
    ('expanded_index_put', "", 'torch.zeros(1).expand(3).index_put_((torch.tensor([0]),), torch.tensor([1.]))'),
    ('instancenorm_mismatch', "", 'nn.InstanceNorm1d(3)(torch.randn(2, 4, 5))'),
    ('saved_variables', 'class Fn(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, t):\n        ctx.save_for_backward(t); return t * 2\n    @staticmethod\n    def backward(ctx, g):\n        (t,) = ctx.saved_variables; return g * 2\ny = torch.randn(2, requires_grad=True)',
     'Fn.apply(y).sum().backward()'),
    ('fn_instantiate', 'class Fn2(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, t): return t * 2\n    @staticmethod\n    def backward(ctx, g): return g * 2',
     'Fn2()'),
    ('opt_dup', 'p = torch.randn(2, requires_grad=True)',
     'torch.optim.SGD([p, p], lr=0.1)'),
    ('sched_order', 'p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1); s = torch.optim.lr_scheduler.StepLR(o, 1)',
     's.step()'),
    ('sched_epoch', 'p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1); s = torch.optim.lr_scheduler.StepLR(o, 1)',
     'o.step(); s.step(1)'),
    ('sched_get_lr', 'p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1); s = torch.optim.lr_scheduler.StepLR(o, 1)',
     's.get_lr()'),
    ('init_with_grad', 'w = torch.randn(3, requires_grad=True)',
     'nn.init.normal_(w)'),
    ('bw_hook_full', 'm = nn.Linear(2, 2)',
     'm.register_backward_hook(lambda *a: None)'),
    ('stateless', "import importlib; sl = importlib.import_module(torch.__name__ + '.nn.utils.stateless'); m = nn.Linear(2, 2)",
     'sl.functional_call(m, {}, (torch.randn(2),))'),
    ('mha_mask_mismatch', 'm = nn.MultiheadAttention(4, 1, batch_first=True); q = torch.randn(1, 2, 4)',
     'm(q, q, q, key_padding_mask=torch.tensor([[False, True]]), attn_mask=torch.zeros(2, 2))'),
    ('set_default_tensor_type', "", 'torch.set_default_tensor_type(torch.FloatTensor)'),
    ('cpu_amp_autocast', "", 'torch.cpu.amp.autocast()'),
    ('cuda_amp_autocast', "", 'torch.cuda.amp.autocast()'),
    ('gradscaler', "", 'torch.cuda.amp.GradScaler()'),
    ('is_autocast_cpu', "", 'torch.is_autocast_cpu_enabled()'),
    ('transformer_nested', "", 'nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 1, norm_first=True), 2)'),
    ('create_graph_cycle', 'y = torch.tensor(2., requires_grad=True)',
     '(y * y).backward(create_graph=True)'),
    ('masked_fill_exp', "", 'torch.zeros(1).expand(3).masked_fill_(torch.tensor([True, False, False]), 1.)'),
    ('setitem_mask_exp', "", 'e = torch.zeros(1).expand(3); e[torch.tensor([True, False, False])] = 1.'),
    ('setitem_idx_exp', "", 'e = torch.zeros(1).expand(3); e[torch.tensor([0])] = torch.tensor([1.])'),
    ('get_autocast_cpu_dtype', "", 'torch.get_autocast_cpu_dtype()'),
    ('kl_mod', "", 'nn.KLDivLoss()(torch.randn(3), torch.rand(3))'),
    ('dropout2d_mod', "", 'nn.Dropout2d()(torch.randn(2, 3))'),
    ('Tensor_T_1d', "", 'torch.randn(3).T'),
    ('Tensor_T_0d', "", 'torch.tensor(1.).T'),
    ('cross_method', "", 'torch.randn(3, 3).cross(torch.randn(3, 3))'),
    ('qr_method', "", 'torch.eye(3).qr()'),
    ('lu_method', "", 'torch.eye(3).lu()'),
    ('stft_method', "", 'torch.randn(64).stft(16, return_complex=True)'),
    ('conv2d_same', "", "F.conv2d(torch.randn(1, 1, 5, 5), torch.randn(1, 1, 4, 4), padding='same')"),
    ('istft_length', 's = torch.stft(torch.randn(64), 16, window=torch.hann_window(16), return_complex=True)',
     'torch.istft(s, 16, window=torch.hann_window(16), length=100)'),
    ('new_tensor', 'a = torch.randn(3)',
     'a.new_tensor(a)'),
    ('tensor_dtype', 'a = torch.randn(3)',
     'torch.tensor(a, dtype=torch.float64)'),
    ('as_tensor_dtype', 'a = torch.randn(3, requires_grad=True)',
     'r = torch.as_tensor(a, dtype=torch.float64); assert r.dtype == torch.float64'),
    ('asarray_t', 'a = torch.randn(3)',
     'torch.asarray(a, dtype=torch.float64)'),
    ('T_2d', 'a = torch.randn(3, 2)',
     'a.T'),
    ('T_via_numpy_style', 'a = torch.randn(3)',
     'a.T.shape'),
    ('embedding_bag_order', "", 'F.embedding_bag(torch.tensor([[0, 1]]), torch.randn(3, 2))'),
    ('hardtanh_min_value', "", 'nn.Hardtanh(min_value=-2.)'),
    ('hardtanh_max_value', "", 'nn.Hardtanh(max_value=2.)'),
    ('module_complex', 'm = nn.Linear(2, 2)',
     'm.to(torch.complex64)'),
    ('bw_hook_nontensor', 'class M(nn.Module):\n    def forward(self, t): return t * 2, t * 3\nm = M(); m.register_backward_hook(lambda *a: None); y = torch.randn(2, requires_grad=True)',
     'o = m(y); (o[0].sum() + o[1].sum()).backward()'),
    ('bw_hook_multi_nodes', 'm = nn.Sequential(nn.Linear(2, 2), nn.ReLU()); m.register_backward_hook(lambda *a: None); y = torch.randn(2, requires_grad=True)',
     'm(y).sum().backward()'),
    ('bw_hook_single', 'm = nn.Linear(2, 2); m.register_backward_hook(lambda *a: None); y = torch.randn(2, requires_grad=True)',
     'm(y).sum().backward()'),
    ('bw_hook_dict_out', "class M(nn.Module):\n    def forward(self, t): return {'a': t * 2}\nm = M(); m.register_full_backward_hook(lambda *a: None); y = torch.randn(2, requires_grad=True)",
     'm(y)'),
    ('state_dict_positional', 'm = nn.Linear(2, 2)',
     "m.state_dict({}, 'p.')"),
    ('grad_variables', "", 'torch.autograd.backward(x.sum(), grad_variables=torch.tensor(1.))'),
    ('only_inputs', "", 'torch.autograd.grad(x.sum(), x, only_inputs=False)'),
    ('clip_empty_gen', "", 'torch.nn.utils.clip_grad_norm_((p for p in []), 1.0)'),
    ('clip_empty_list', "", 'torch.nn.utils.clip_grad_norm_([], 1.0)'),
    ('sched_overridden', 'p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1); s = torch.optim.lr_scheduler.StepLR(o, 1); o.step = lambda *a, **k: None',
     's.step()'),
    ('sched_swa_get_lr', "p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1); import importlib; sw = importlib.import_module(torch.__name__ + '.optim.swa_utils'); s = sw.SWALR(o, swa_lr=0.05)",
     's.get_lr()'),
    ('sched_order_2', 'p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1); s = torch.optim.lr_scheduler.ExponentialLR(o, 0.9)',
     's.step()'),
    ('plateau_epoch', 'p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1); s = torch.optim.lr_scheduler.ReduceLROnPlateau(o)',
     's.step(1.0, 3)'),
    ('fork_rng', "", 'with torch.random.fork_rng(): pass'),
    ('hook_nontensor_out', 'class M(nn.Module):\n    def forward(self, t): return [t * 2]\nm = M(); m.register_full_backward_hook(lambda *a: None); y = torch.randn(2, requires_grad=True)',
     'm(y)'),
    ('rnn_list_lengths', "", 'torch.nn.utils.rnn.pack_padded_sequence(torch.randn(3, 2, 1), [3, 2])'),
    ('len_tensor', "", 'len(a)'),
    ('softmax_dim_none_3d', "", 'F.softmax(torch.randn(2, 3, 4))'),
    ('log_softmax_module', "", 'nn.LogSoftmax()(a)'),
    ('softmin_module', "", 'nn.Softmin()(a)'),
    ('softmax2d', "", 'nn.Softmax2d()(torch.randn(1, 2, 3, 3))'),
    ('crossentropy_target_size', "", 'nn.CrossEntropyLoss()(torch.randn(3, 4), torch.tensor([0, 1, 2]))'),
    ('bce_logits_size', "", 'F.binary_cross_entropy_with_logits(torch.randn(3), torch.rand(3, 1))'),
    ('nll_size_average', "", 'F.nll_loss(torch.randn(3, 4).log_softmax(1), torch.tensor([0, 1, 2]), size_average=True)'),
    ('kl_batchmean', "", "F.kl_div(torch.randn(2, 3), torch.rand(2, 3), reduction='batchmean')"),
    ('sigmoid_F', "", 'F.sigmoid(a); F.tanh(a)'),
    ('nonleaf_retain', "", 'y = x * 2; y.retain_grad(); y.grad'),
    ('nonleaf_after_bw', "", 'y = x * 2; y.sum().backward(); y.grad'),
    ('leaf_grad', "", 'x.grad'),
    ('item_req', "", 'x.sum().item()'),
    ('tolist_req', "", 'x.tolist()'),
    ('numpy_req', "", 'x.detach().numpy()'),
    ('int_req', "", 'int(x.sum())'),
    ('bool_req', "", 'bool(x.sum())'),
    ('format_req', "", "'{:.2f}'.format(x.sum())"),
    ('index_tensor_float', "", 'a[torch.tensor([0.])]'),
    ('index_uint8', "", 'a[torch.tensor([1, 0, 1], dtype=torch.uint8)]'),
    ('where_cond_uint8', "", 'torch.where(torch.tensor([1, 0, 1], dtype=torch.uint8), torch.zeros(3), torch.ones(3))'),
    ('masked_fill_uint8', "", 'a.masked_fill(torch.ones(3, 4, dtype=torch.uint8), 0.)'),
    ('nonzero_as_tuple', "", 'torch.nonzero(a)'),
    ('floor_divide', "", 'torch.floor_divide(torch.tensor([5]), 2)'),
    ('div_trunc_op', "", 'torch.tensor([5]) // 2'),
    ('upsample_align', "", "F.interpolate(torch.randn(1, 1, 4), scale_factor=2, mode='linear')"),
    ('interpolate_scale_recompute', "", "F.interpolate(torch.randn(1, 1, 4, 4), scale_factor=1.5, mode='bilinear', align_corners=False)"),
    ('torch_norm_fro', "", "torch.norm(a, p='fro', dim=1)"),
    ('sparse_coo_no_check', "", 'torch.sparse_coo_tensor(torch.tensor([[0]]), torch.tensor([1.]), (2,))'),
    ('eig_deprec', "", 'torch.linalg.eig(torch.eye(2))'),
    ('matrix_rank', "", 'torch.linalg.matrix_rank(torch.eye(2), tol=1e-3)'),
    ('max_pool_return', "", 'F.max_pool1d(torch.randn(1, 1, 4), 2, return_indices=False)'),
    ('batchnorm_eval_one', "", 'nn.BatchNorm1d(3)(torch.randn(1, 3))'),
    ('param_requires_grad_int', "", 'nn.Parameter(torch.tensor([1, 2]))'),
    ('sum_bool_dtype', "", 'torch.tensor([True, False]).sum()'),
    ('tensor_requires_grad_int', "", 'torch.tensor([1, 2], dtype=torch.float32).requires_grad_()'),
    ('clone_grad', "", 'x.clone().grad'),
    ('detach_grad', "", 'x.detach().grad'),
    ('zero_dim_cat', "", 'torch.cat([torch.tensor([1.]), torch.tensor([])])'),
    ('cat_empty', "", 'torch.cat([torch.randn(2, 3), torch.empty(0)])'),
    ('std_mean_unbiased', "", 'torch.std(a, unbiased=True)'),
    ('var_ddof', "", 'torch.var(a, 1, True)'),
    ('randint_float', "", 'torch.randint(0, 3, (2,), dtype=torch.float32)'),
    ('arange_float_end', "", 'torch.arange(0, 1, 0.3)'),
    ('manual_seed_big', "", 'torch.manual_seed(2**70)'),
    ('lr_scheduler_verbose', 'p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1)',
     'torch.optim.lr_scheduler.StepLR(o, 1, verbose=True)'),
    ('optim_lr_tensor', 'p = torch.randn(2, requires_grad=True)',
     'torch.optim.Adam([p], lr=torch.tensor(0.1))'),
    ('adam_capturable', 'p = torch.randn(2, requires_grad=True)',
     'torch.optim.Adam([p], lr=0.1, capturable=True)'),
    ('multilabel_soft_margin_size', "", 'F.multilabel_soft_margin_loss(torch.randn(3, 4), torch.rand(3, 4), size_average=False)'),
    ('poisson_nll_size', "", 'F.poisson_nll_loss(torch.randn(3, 1), torch.rand(3))'),
    ('gaussian_nll', "", 'F.gaussian_nll_loss(torch.randn(3, 2), torch.randn(3, 2), torch.rand(3, 1))'),
    ('dropout_p_int', "", 'F.dropout(a, 1)'),
    ('alpha_dropout_noop', "", 'F.feature_alpha_dropout(a, 0.5)'),
    ('pad_reflect', "", "F.pad(a, (1, 1), mode='reflect')"),
    ('bilinear_upsample_module', "", 'nn.UpsamplingBilinear2d(scale_factor=2)(torch.randn(1, 1, 2, 2))'),
    ('upsampling_nearest_module', "", 'nn.UpsamplingNearest2d(scale_factor=2)(torch.randn(1, 1, 2, 2))'),
    ('transformer_nonbatch_first', "", 'nn.Transformer(d_model=4, nhead=1, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=4)'),
    ('init_uniform_old', "", 'nn.init.uniform(torch.empty(3)); nn.init.xavier_uniform(torch.empty(3, 3)); nn.init.constant(torch.empty(3), 1.)'),
    ('uint8_setitem_scalar', 'a = torch.arange(12.).reshape(3, 4); m = torch.tensor([1, 0, 1], dtype=torch.uint8)',
     'b = a.clone(); b[m] = 0.'),
    ('uint8_setitem_tensor', 'a = torch.arange(12.).reshape(3, 4); m = torch.tensor([1, 0, 1], dtype=torch.uint8)',
     'b = a.clone(); b[m] = torch.zeros(4); assert b.sum().item() == 22.'),
    ('uint8_get_value', 'a = torch.arange(12.).reshape(3, 4); m = torch.tensor([1, 0, 1], dtype=torch.uint8)',
     'assert a[m].sum().item() == 44.; assert a[m, 1:].shape == (2, 3)'),
    ('uint8_index_put', 'a = torch.arange(12.).reshape(3, 4); m = torch.tensor([1, 0, 1], dtype=torch.uint8)',
     'a.index_put((m,), torch.tensor(0.))'),
    ('int8_index', "", 'torch.tensor([1, 2, 3])[torch.tensor([1, 0, 1], dtype=torch.int8)]'),
    ('int16_index', "", 'torch.tensor([1, 2, 3])[torch.tensor([1, 0, 1], dtype=torch.int16)]'),
    ('int32_index', "", 'assert torch.tensor([1, 2, 3])[torch.tensor([1, 0, 1], dtype=torch.int32)].tolist() == [2, 1, 2]'),
    ('where_int', "", 'torch.where(torch.tensor([1, 0, 1]), torch.zeros(3), torch.ones(3))'),
    ('where_int8', "", 'torch.where(torch.tensor([1, 0, 1], dtype=torch.int8), torch.zeros(3), torch.ones(3))'),
    ('where_uint8_val', "", 'assert torch.where(torch.tensor([1, 0, 1], dtype=torch.uint8), torch.zeros(3), torch.ones(3)).tolist() == [0., 1., 0.]'),
    ('custom_opt_sched', "class MyOpt(torch.optim.Optimizer):\n    def __init__(self, params): super().__init__(params, dict(lr=0.1))\n    def step(self, closure=None):\n        for g in self.param_groups:\n            for p in g['params']:\n                if p.grad is not None: p.data.add_(p.grad, alpha=-g['lr'])\np = torch.randn(2, requires_grad=True); o = MyOpt([p]); s = torch.optim.lr_scheduler.StepLR(o, 1)",
     'p.grad = torch.ones(2); o.step(); s.step()'),
    ('sched_after_step', 'p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1); s = torch.optim.lr_scheduler.StepLR(o, 1)',
     'p.grad = torch.ones(2); o.step(); s.step()'),
    ('sched_two', 'p = torch.randn(2, requires_grad=True); o = torch.optim.SGD([p], lr=0.1); s = torch.optim.lr_scheduler.StepLR(o, 1); s2 = torch.optim.lr_scheduler.ExponentialLR(o, 0.9)',
     's.step(); s2.step()'),
    ('list_index_seq', 'a = torch.arange(12.).reshape(3, 4)',
     'a[[torch.tensor([0, 1]), torch.tensor([1, 2])]]'),
    ('list_index_slices', 'a = torch.arange(12.).reshape(3, 4)',
     'a[[slice(0, 2), 1]]'),
    ('grad_both', 'x = torch.randn(3, requires_grad=True)',
     'torch.autograd.backward(x.sum(), grad_tensors=torch.tensor(1.), grad_variables=torch.tensor(1.))'),
]

_TABLE_SCRIPT = r"""
import json, sys, warnings
import {module} as torch
import {module}.nn as nn
import {module}.nn.functional as F

def run(code, ns):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            exec(compile(code, "<trigger>", "exec"), ns)
            err = None
        except Exception as e:
            err = type(e).__name__ + ": " + str(e)
    return [[w.category.__name__, str(w.message),
             "line %d" % w.lineno if w.filename == "<trigger>" else "inside"] for w in seen], err

out, spaces = {{}}, {{}}
for name, setup, code in json.loads(sys.stdin.read()):
    ns = {{"torch": torch, "nn": nn, "F": F}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec({common!r} + "\n" + setup, ns)
    spaces[name] = (ns, code)
    out[name] = [run(code, ns), run(code, ns)]
torch.set_warn_always(True)
for name, (ns, code) in spaces.items():
    out[name] += [run(code, ns), run(code, ns)]
print(json.dumps(out))
"""


def _run_table(module: str):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    return subprocess.Popen(
        [sys.executable, "-c", _TABLE_SCRIPT.format(module=module, common=COMMON)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env, cwd=os.path.dirname(__file__))


def test_every_warning_as_pytorch_gives_it():
    """Each trigger of the table: the same warnings (category, text, line or inside the
    library), as often (once per process or every time), as PyTorch; the same error if any.
    One fresh process a side, the two sides run at once."""
    pytest.importorskip("torch")
    import json

    table = json.dumps(TRIGGERS)
    procs = {m: _run_table(m) for m in ("gradcli.torch", "torch")}
    results = {}
    for m, p in procs.items():
        stdout, stderr = p.communicate(table, timeout=300)
        assert p.returncode == 0, stderr[-3000:]
        results[m] = json.loads(stdout)
    ours, theirs = results["gradcli.torch"], results["torch"]
    differ = [(name, ours[name], theirs[name]) for name, _, _ in TRIGGERS
              if ours[name] != theirs[name]]
    assert not differ, "\n".join(f"{n}:\n  gradcli {o}\n  PyTorch {t}" for n, o, t in differ[:5])
    given = sum(bool(runs[0][0]) for runs in theirs.values())
    assert given > 120  # (the table's triggers do trigger)
