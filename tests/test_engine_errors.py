"""Every PyTorch error message the engine raises: one test each, exact text.

Each case is a snippet run with `torch` bound to gradcli.torch; the exception
type and message must be PyTorch 2.13's. Where PyTorch is importable the snippet
also runs under it and the two must agree; the literal below is what PyTorch
2.13 printed, checked either way.
"""

from __future__ import annotations

import pytest

import gradcli.torch as gt

try:  # the oracle, when installed (never imported by gradcli itself)
    import torch as real_torch
except ImportError:  # pragma: no cover - CI installs it
    real_torch = None

CASES = [
    ('non_scalar_implicit_backward',
     'torch.ones(2, requires_grad=True).mul(2).backward()',
     RuntimeError, 'grad can be implicitly created only for scalar outputs'),
    ('second_backward',
     'x = torch.ones(2, requires_grad=True); y = (x * x).sum(); y.backward(); y.backward()',
     RuntimeError, 'Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.'),
    ('int_requires_grad_',
     'torch.tensor([1, 2]).requires_grad_()',
     RuntimeError, 'only Tensors of floating point dtype can require gradients'),
    ('int_requires_grad_setter',
     't = torch.tensor([1, 2]); t.requires_grad = True',
     RuntimeError, 'only Tensors of floating point and complex dtype can require gradients'),
    ('int_requires_grad_factory',
     'torch.tensor([1, 2], requires_grad=True)',
     RuntimeError, 'Only Tensors of floating point and complex dtype can require gradients'),
    ('nonleaf_requires_grad_false',
     'x = torch.ones(2, requires_grad=True); y = x * 2; y.requires_grad_(False)',
     RuntimeError, "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."),
    ('broadcast_add',
     'torch.ones(3) + torch.ones(2)',
     RuntimeError, 'The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0'),
    ('broadcast_mul_2d',
     'torch.ones(2, 3) * torch.ones(3, 2)',
     RuntimeError, 'The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1'),
    ('matmul_2d',
     'torch.ones(2, 3) @ torch.ones(2, 3)',
     RuntimeError, 'mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)'),
    ('matmul_0d',
     'torch.tensor(1.0) @ torch.ones(2)',
     RuntimeError, 'both arguments to matmul need to be at least 1D, but they are 0D and 1D'),
    ('matmul_1d_2d',
     'torch.ones(3) @ torch.ones(2, 2)',
     RuntimeError, 'mat1 and mat2 shapes cannot be multiplied (1x3 and 2x2)'),
    ('matmul_batched',
     'torch.ones(2, 2, 3) @ torch.ones(2, 2, 3)',
     RuntimeError, 'Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 2].'),
    ('mm_shapes',
     'torch.mm(torch.ones(2, 3), torch.ones(2, 3))',
     RuntimeError, 'mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)'),
    ('mm_rank',
     'torch.mm(torch.ones(3), torch.ones(3, 2))',
     RuntimeError, 'self must be a matrix'),
    ('mv_shapes',
     'torch.mv(torch.ones(2, 3), torch.ones(2))',
     RuntimeError, 'size mismatch, got input (2), mat (2x3), vec (2)'),
    ('dot_sizes',
     'torch.dot(torch.ones(3), torch.ones(2))',
     RuntimeError, 'inconsistent tensor size, expected tensor [3] and src [2] to have the same number of elements, but got 3 and 2 elements respectively'),
    ('dot_rank',
     'torch.dot(torch.ones(2, 2), torch.ones(2))',
     RuntimeError, '1D tensors expected, but got 2D and 1D tensors'),
    ('dot_dtype',
     'torch.dot(torch.ones(2), torch.ones(2, dtype=torch.float64))',
     RuntimeError, 'dot : expected both vectors to have same dtype, but found Float and Double'),
    ('mm_dtype',
     'torch.mm(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64))',
     RuntimeError, 'expected m1 and m2 to have the same dtype, but got: float != double'),
    ('cat_sizes',
     'torch.cat([torch.ones(2, 2), torch.ones(3, 3)])',
     RuntimeError, 'Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for tensor number 1 in the list.'),
    ('cat_dims',
     'torch.cat([torch.ones(2), torch.ones(2, 2)])',
     RuntimeError, 'Tensors must have same number of dimensions: got 1 and 2'),
    ('cat_empty',
     'torch.cat([])',
     ValueError, 'torch.cat(): expected a non-empty list of Tensors'),
    ('cat_zero_dim',
     'torch.cat([torch.tensor(1.0), torch.tensor(2.0)])',
     RuntimeError, 'zero-dimensional tensor (at position 0) cannot be concatenated'),
    ('stack_sizes',
     'torch.stack([torch.ones(2), torch.ones(3)])',
     RuntimeError, 'stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1'),
    ('view_size',
     'torch.ones(2, 3).view(4)',
     RuntimeError, "shape '[4]' is invalid for input of size 6"),
    ('view_stride',
     'torch.ones(2, 3).t().view(6)',
     RuntimeError, "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."),
    ('view_two_minus_one',
     'torch.ones(6).view(-1, -1)',
     RuntimeError, 'only one dimension can be inferred'),
    ('reshape_size',
     'torch.ones(2, 3).reshape(5, -1)',
     RuntimeError, "shape '[5, -1]' is invalid for input of size 6"),
    ('expand_size',
     'torch.ones(2, 3).expand(3, 3)',
     RuntimeError, 'The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]'),
    ('expand_rank',
     'torch.ones(2, 3).expand(3)',
     RuntimeError, 'expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)'),
    ('inplace_leaf',
     'x = torch.ones(2, requires_grad=True); x.add_(1)',
     RuntimeError, 'a leaf Variable that requires grad is being used in an in-place operation.'),
    ('inplace_leaf_iadd',
     'x = torch.ones(2, requires_grad=True); x += 1',
     RuntimeError, 'a leaf Variable that requires grad is being used in an in-place operation.'),
    ('inplace_view_of_leaf',
     'x = torch.ones(2, requires_grad=True); x[0].mul_(2)',
     RuntimeError, 'a view of a leaf Variable that requires grad is being used in an in-place operation.'),
    ('setitem_leaf',
     'x = torch.ones(2, requires_grad=True); x[0] = 3.0',
     RuntimeError, 'a view of a leaf Variable that requires grad is being used in an in-place operation.'),
    ('saved_tensor_modified',
     'x = torch.ones(3, requires_grad=True); y = x.exp(); y.add_(1); y.sum().backward()',
     RuntimeError, 'one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of Exp, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).'),
    ('saved_input_modified',
     'x = torch.ones(3, requires_grad=True); a = x * 1; b = a * a; a.mul_(2); b.sum().backward()',
     RuntimeError, 'one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of Mul, is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).'),
    ('saved_leaf_modified',
     'w = torch.ones(3); x = torch.ones(3, requires_grad=True); y = (x * w).sum(); w.add_(1); y.backward()',
     RuntimeError, 'one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [3]] is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).'),
    ('item_multi',
     'torch.ones(2).item()',
     RuntimeError, 'a Tensor with 2 elements cannot be converted to Scalar'),
    ('item_empty',
     'torch.ones(0).item()',
     RuntimeError, 'a Tensor with 0 elements cannot be converted to Scalar'),
    ('float_multi',
     'float(torch.ones(2))',
     ValueError, 'only one element tensors can be converted to Python scalars'),
    ('int_multi',
     'int(torch.ones(2))',
     ValueError, 'only one element tensors can be converted to Python scalars'),
    ('bool_ambiguous',
     'bool(torch.ones(2))',
     RuntimeError, 'Boolean value of Tensor with more than one value is ambiguous'),
    ('bool_empty',
     'bool(torch.ones(0))',
     RuntimeError, 'Boolean value of Tensor with no values is ambiguous'),
    ('if_ambiguous',
     '1 if torch.ones(2) else 0',
     RuntimeError, 'Boolean value of Tensor with more than one value is ambiguous'),
    ('index_out_of_range',
     'torch.ones(2, 3)[2]',
     IndexError, 'index 2 is out of bounds for dimension 0 with size 2'),
    ('index_out_of_range_dim1',
     'torch.ones(2, 3)[0, 3]',
     IndexError, 'index 3 is out of bounds for dimension 1 with size 3'),
    ('index_too_many',
     'torch.ones(2)[0, 0]',
     IndexError, 'too many indices for tensor of dimension 1'),
    ('index_zero_dim',
     'torch.tensor(1.0)[0]',
     IndexError, 'invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number'),
    ('index_float',
     'torch.ones(2)[1.5]',
     IndexError, 'only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got float)'),
    ('index_tensor_float',
     'torch.ones(2)[torch.tensor([0.0])]',
     IndexError, 'tensors used as indices must be long, int, byte or bool tensors'),
    ('index_tensor_out_of_range',
     'torch.ones(2)[torch.tensor([5])]',
     IndexError, 'index 5 is out of bounds for dimension 0 with size 2'),
    ('index_mask_shape',
     'torch.ones(4)[torch.tensor([True, False])]',
     IndexError, 'The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [4] at index 0'),
    ('dim_out_of_range_sum',
     'torch.ones(2, 3).sum(2)',
     IndexError, 'Dimension out of range (expected to be in range of [-2, 1], but got 2)'),
    ('dim_out_of_range_softmax',
     'torch.ones(2).softmax(-2)',
     IndexError, 'Dimension out of range (expected to be in range of [-1, 0], but got -2)'),
    ('dim_out_of_range_size',
     'torch.ones(2).size(3)',
     IndexError, 'Dimension out of range (expected to be in range of [-1, 0], but got 3)'),
    ('dim_out_of_range_unsqueeze',
     'torch.ones(2).unsqueeze(3)',
     IndexError, 'Dimension out of range (expected to be in range of [-2, 1], but got 3)'),
    ('grad_allow_unused',
     'x = torch.ones(2, requires_grad=True); z = torch.ones(2, requires_grad=True); torch.autograd.grad((x * 2).sum(), [x, z])',
     RuntimeError, 'The differentiated Tensor at index 1 appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.'),
    ('grad_not_requiring',
     'x = torch.ones(2, requires_grad=True); z = torch.ones(2); torch.autograd.grad((x * 2).sum(), [z])',
     RuntimeError, 'One of the differentiated Tensors does not require grad'),
    ('backward_no_grad_fn',
     'torch.ones(2).sum().backward()',
     RuntimeError, 'element 0 of tensors does not require grad and does not have a grad_fn'),
    ('grad_output_shape',
     'x = torch.ones(2, requires_grad=True); (x * 2).backward(torch.ones(3))',
     RuntimeError, 'Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] has a shape of torch.Size([2]).'),
    ('retain_grad_no_grad',
     'torch.ones(2).retain_grad()',
     RuntimeError, "can't retain_grad on Tensor that has requires_grad=False"),
    ('hook_no_grad',
     'torch.ones(2).register_hook(lambda g: g)',
     RuntimeError, "cannot register a hook on a tensor that doesn't require gradient"),
    ('neg_bool',
     '-torch.tensor([True])',
     RuntimeError, 'Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.'),
    ('sub_bool',
     'torch.tensor([True]) - torch.tensor([False])',
     RuntimeError, 'Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.'),
    ('int_pow_negative',
     'torch.tensor([2]) ** -1',
     RuntimeError, 'Integers to negative integer powers are not allowed.'),
    ('mean_int',
     'torch.tensor([1, 2]).mean()',
     RuntimeError, 'mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long'),
    ('std_int',
     'torch.tensor([1, 2]).std()',
     RuntimeError, 'std and var only support floating point and complex dtypes'),
    ('max_empty',
     'torch.ones(0).max()',
     RuntimeError, "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."),
    ('max_empty_dim',
     'torch.ones(0, 2).max(0)',
     IndexError, 'max(): Expected reduction dim 0 to have non-zero size.'),
    ('clamp_none',
     'torch.clamp(torch.ones(2))',
     RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None"),
    ('inplace_dtype',
     't = torch.tensor([1, 2]); t += 1.5',
     RuntimeError, "result type Float can't be cast to the desired output type Long"),
    ('inplace_shape',
     't = torch.ones(3); t += torch.ones(2, 3)',
     RuntimeError, "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    ('where_condition',
     'torch.where(torch.tensor([1, 0]), torch.ones(2), torch.zeros(2))',
     RuntimeError, 'where expected condition to be a boolean tensor, but got a tensor with dtype Long'),
    ('cross_entropy_target',
     'torch.nn.functional.cross_entropy(torch.ones(2, 3), torch.tensor([0, 3]))',
     IndexError, 'Target 3 is out of bounds.'),
    ('bce_range',
     'torch.nn.functional.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.0]))',
     RuntimeError, 'all elements of input should be between 0 and 1'),
    ('permute_dims',
     'torch.ones(2, 3).permute(0)',
     RuntimeError, 'permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to len(dims) = 1'),
    ('t_3d',
     'torch.ones(2, 2, 2).t()',
     RuntimeError, 't() expects a tensor with <= 2 dimensions, but self is 3D'),
    ('len_zero_dim',
     'len(torch.tensor(1.0))',
     TypeError, 'len() of a 0-d tensor'),
    ('iter_zero_dim',
     'iter(torch.tensor(1.0))',
     TypeError, 'iteration over a 0-d tensor'),
    ('split_sizes',
     'torch.ones(4).split([1, 2])',
     RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at dimension 0), but got split_sizes=[1, 2]"),
    ('ragged_tensor',
     'torch.tensor([[1, 2], [3]])',
     ValueError, 'expected sequence of length 2 at dim 1 (got 1)'),
    ('detach_view_inplace',
     'x = torch.ones(2, 2); v = x[0]; v.detach_()',
     RuntimeError, "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence detach_() cannot be called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."),
    ('multi_output_view_inplace',
     'x = torch.ones(4, requires_grad=True); y = x * 1; a, b = y.split(2); a.mul_(2)',
     RuntimeError, 'Output 0 of Split is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.'),
    ('empty_inputs_backward',
     'x = torch.ones(2, requires_grad=True); (x * 2).sum().backward(inputs=[])',
     RuntimeError, '`inputs` argument to `backward()` cannot be empty.'),
    ('grad_assign_dtype',
     'x = torch.ones(2, requires_grad=True); x.grad = torch.ones(2, dtype=torch.float64)',
     RuntimeError, "attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'. The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may break downstream systems that assume they match."),
    ('grad_assign_type',
     'x = torch.ones(2, requires_grad=True); x.grad = 3',
     TypeError, 'assigned grad expected to be a Tensor or None but got grad of type int'),
    ('unbind_output_inplace',
     'x = torch.ones(2, requires_grad=True); a, b = (x * 1).unbind(0); a.mul_(2)',
     RuntimeError, 'Output 0 of Unbind is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.'),
    ('tensor_number_then_list_float', 'torch.tensor([1.5, [2.0]])',
     TypeError, 'must be real number, not list'),
    ('tensor_number_then_list_int', 'torch.tensor([[1, [2]], [3, 4]])',
     TypeError, "'list' object cannot be interpreted as an integer"),
    ('tensor_list_then_number', 'torch.tensor([[1], 2])', TypeError, 'not a sequence'),
    ('tensor_int_beyond_int64', 'torch.tensor([1, 2 ** 63])',
     ValueError, 'Overflow when unpacking long long'),
    ('tensor_int_beyond_int32', 'torch.tensor([2 ** 40, 2 ** 63], dtype=torch.int32)',
     RuntimeError, 'value cannot be converted to type int32 without overflow'),
    ('tensor_nan_to_int', "torch.tensor([float('nan')], dtype=torch.int64)",
     RuntimeError, 'value cannot be converted to type int64 without overflow'),
    ('assign_grad_size',
     'x = torch.ones(2, requires_grad=True); x.grad = torch.ones(3)',
     RuntimeError, "attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. Please ensure that the gradient and the tensor are the same size"),
]


def _raised(module, code: str):
    try:
        exec(code, {"torch": module})  # noqa: S102 - test snippets
    except Exception as err:  # noqa: BLE001
        return type(err), str(err)
    return None, None


@pytest.mark.parametrize(("code", "kind", "message"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_message_is_pytorchs(code, kind, message):
    ours = _raised(gt, code)
    assert ours == (kind, message)
    if real_torch is not None:
        theirs = _raised(real_torch, code)
        assert (theirs[0].__name__, theirs[1]) == (ours[0].__name__, ours[1])


def test_unsupported_tensor_method_says_so():
    with pytest.raises(AttributeError,
                       match="^torch.Tensor.to_mkldnn is not supported by gradcli$"):
        gt.ones(2).to_mkldnn  # noqa: B018
    with pytest.raises(AttributeError, match="^'Tensor' object has no attribute 'sizee'$"):
        gt.ones(2).sizee  # noqa: B018
    if real_torch is not None:  # the list names only real Tensor methods
        from gradcli.engine.tensor import UNSUPPORTED_METHODS

        assert all(hasattr(real_torch.ones(2), n) for n in UNSUPPORTED_METHODS)


def test_unsupported_names_are_not_methods_and_tensor_keeps_default_lookup():
    from gradcli.engine.tensor import UNSUPPORTED_METHODS, Tensor, _Unsupported

    # an op installed later under a listed name would make the list lie
    assert all(isinstance(vars(Tensor)[n], _Unsupported) for n in UNSUPPORTED_METHODS)
    assert not any(hasattr(gt.ones(2), n) for n in UNSUPPORTED_METHODS)
    with pytest.raises(AttributeError,
                       match="^torch.Tensor.to_mkldnn is not supported by gradcli$"):
        gt.Tensor.to_mkldnn  # noqa: B018
    # a __getattr__ anywhere in the MRO switches off CPython's attribute caches
    # for every tensor attribute read; the messages above come from descriptors
    assert not any("__getattr__" in vars(k) for k in Tensor.__mro__)


def test_unsupported_torch_name_says_so():
    with pytest.raises(AttributeError, match="^torch.fft.frobnicate is not supported by gradcli$"):
        gt.fft.frobnicate  # noqa: B018
    with pytest.raises(AttributeError, match="^torch.fft_thing is not supported by gradcli$"):
        gt.fft_thing  # noqa: B018


def test_detect_anomaly_names_the_node():
    x = gt.tensor([0.0, 1.0], requires_grad=True)
    with gt.autograd.detect_anomaly():
        y = x.sqrt() * 0  # backward: 0 * inf = nan in SqrtBackward0's output
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    text = "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert str(info.value) == text
    if real_torch is not None:
        import warnings

        tx = real_torch.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with real_torch.autograd.detect_anomaly():
                ty = tx.sqrt() * 0
                with pytest.raises(RuntimeError) as tinfo:
                    ty.sum().backward()
        assert str(tinfo.value) == text
