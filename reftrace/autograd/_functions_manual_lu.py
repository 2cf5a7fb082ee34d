"""FunctionsManual's backward functions of the LU and Householder families (torch 2.13's
torch/csrc/autograd/FunctionsManual.cpp): linalg_lu_backward, lu_factor_ex_backward,
lu_unpack_backward, linalg_lu_solve_LU, householder_product_backward and ormqr_backward.

Written with reftrace ops through the public API, as torch's are written with ATen ops, so that
under ``create_graph=True`` the computation is recorded and differentiated again. Where torch
updates a tensor in place only when no graph is being built (householder's ``K``), the
out-of-place branch it takes for double backward is used always: same values.
"""
import reftrace as _rt


def _solve_triangular(A, B, upper, left=True, unitriangular=False):
    return _rt.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


# -- LU --------------------------------------------------------------------------------------------
# A = P L U with L (m, k) unit lower triangular and U (k, n) upper triangular, k = min(m, n).
# For m <= n write A = (A1 | A2), U = (U1 | U2); then (torch's derivation, 1_L the strictly lower
# and 1_U the upper triangle)
#   A1_grad = P L^{-H} [L^H L_grad o 1_L + U1_grad U1^H o 1_U - U2_grad U2^H o 1_L] U1^{-H}
#   A2_grad = P L^{-H} U2_grad
# and symmetrically for m > n.

def linalg_lu_backward(L_grad, U_grad, P, L, U, pivot):
    if L_grad is None and U_grad is None:
        return None
    m = L.shape[-2]
    n = U.shape[-1]
    k = min(m, n)
    if m == n:
        # A_grad = P L^{-H} [L^H L_grad o 1_L + U_grad U^H o 1_U] U^{-H}
        A_grad = L.mH.matmul(L_grad).tril(-1) if L_grad is not None else None
        if U_grad is not None:
            A_grad = (A_grad + U_grad.matmul(U.mH).triu() if A_grad is not None
                      else U_grad.matmul(U.mH).triu())
        A_grad = _solve_triangular(U.mH, A_grad, upper=False, left=False)
        A_grad = _solve_triangular(L.mH, A_grad, upper=True, left=True, unitriangular=True)
        return P.matmul(A_grad) if pivot else A_grad
    if m < n:
        # wide: A1_grad = P L^{-H} [U1_grad + (L^H L_grad o 1_L - U_grad U^H o 1_U) U1^{-H}],
        #       A2_grad = P L^{-H} U2_grad
        def get_U1(U):
            return U if n == k else U.narrow(-1, 0, k)

        def get_U2(U):
            return U.narrow(-1, k, n - k)
        A_grad = L.mH.matmul(L_grad) if L_grad is not None else None
        if U_grad is not None:
            A_grad = (A_grad - U_grad.triu().matmul(U.mH) if A_grad is not None
                      else -U_grad.triu().matmul(U.mH))
        A_grad = _solve_triangular(get_U1(U).mH, A_grad.tril(-1), upper=False, left=False)
        if U_grad is not None:
            A_grad = _rt.cat([A_grad + get_U1(U_grad).triu(), get_U2(U_grad)], -1)
        A_grad = _solve_triangular(L.mH, A_grad, upper=True, left=True, unitriangular=True)
        if U_grad is None:
            A_grad = _rt.cat([A_grad, _rt.zeros_like(get_U2(U))], -1)
        if pivot:
            A_grad = P.matmul(A_grad)
        return A_grad

    # tall: A1_grad = P [L1_grad + L^{-H} (U_grad U^H o 1_U - L^H L_grad o 1_L)] U^{-H},
    #       A2_grad = P L2_grad U^{-H}
    def get_L1(L):
        return L if m == k else L.narrow(-2, 0, k)

    def get_L2(L):
        return L.narrow(-2, k, m - k)
    A_grad = U_grad.matmul(U.mH) if U_grad is not None else None
    if L_grad is not None:
        A_grad = (A_grad - L.mH.matmul(L_grad.tril(-1)) if A_grad is not None
                  else -L.mH.matmul(L_grad.tril(-1)))
    A_grad = _solve_triangular(get_L1(L).mH, A_grad.triu(), upper=True, left=True,
                               unitriangular=True)
    if L_grad is not None:
        A_grad = _rt.cat([A_grad + get_L1(L_grad).tril(-1), get_L2(L_grad)], -2)
    A_grad = _solve_triangular(U.mH, A_grad, upper=False, left=False)
    if L_grad is None:
        A_grad = _rt.cat([A_grad, _rt.zeros_like(get_L2(L))], -2)
    if pivot:
        A_grad = P.matmul(A_grad)
    return A_grad


def lu_factor_ex_backward(grad, LU, pivs, pivot):
    """The packed LU's gradient: its strictly lower part is L's, its upper part U's."""
    P, L, U = _rt.lu_unpack(LU, pivs, True, pivot)
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L_grad = grad.narrow(-1, 0, k)
    U_grad = grad.narrow(-2, 0, k)
    return linalg_lu_backward(L_grad, U_grad, P, L, U, pivot)


def lu_unpack_backward(L_grad, U_grad, m, n):
    if L_grad is None and U_grad is None:
        return None
    k = min(m, n)

    # the principal (k x k) and complementary parts of L and U
    def get_L1(L):
        return L.tril(-1) if m == k else L.narrow(-2, 0, k).tril(-1)

    def get_L2(L):
        return L.narrow(-2, k, m - k)

    def get_U1(U):
        return U.triu() if n == k else U.narrow(-1, 0, k).triu()

    def get_U2(U):
        return U.narrow(-1, k, n - k)
    if L_grad is not None:
        if U_grad is not None:
            if m == n:
                return L_grad.tril(-1) + U_grad.triu()
            A1_grad = get_L1(L_grad) + get_U1(U_grad)
            A2_grad = get_L2(L_grad) if m > n else get_U2(U_grad)
            return _rt.cat([A1_grad, A2_grad], -2 if m > n else -1)
        if m >= n:
            return L_grad.tril(-1)
        size = list(L_grad.shape)
        size[-1] = n - m
        return _rt.cat([L_grad.tril(-1), _rt.zeros(size, dtype=L_grad.dtype,
                                                    device=L_grad.device)], -1)
    if n >= m:
        return U_grad.triu()
    size = list(U_grad.shape)
    size[-2] = m - n
    return _rt.cat([U_grad.triu(), _rt.zeros(size, dtype=U_grad.dtype, device=U_grad.device)], -2)


def linalg_lu_solve_LU(gX, LU, pivots, X, left, adjoint):
    """LU's gradient through X = op(PLU)^{-1} B. With op_1(A) = A^H or A, op_2(X) and op_3(B) as
    left/adjoint say (left=True, adjoint=False: AX = B; True, True: A^H X = B; False, True:
    A X^H = B^H; False, False: A^H X^H = B^H):
      left != adjoint: gR = U^{-H} op_2(-gX) op_2(X)^H, gU = gR.triu(),
                       gL = (L^{-H} gR U^H).tril(-1)
      left == adjoint: gR = -P^T op_3(X) op_1(op_2(gX)) P L^{-H}, gL = gR.tril(-1),
                       gU = (L^H gR U^{-H}).triu()
    and gLU = gL + gU."""
    P, L, U = _rt.lu_unpack(LU, pivots, True, left == adjoint)
    if left != adjoint:
        # gR = U^{-H} op_2(-gX) op_2(X)^H
        gR = _solve_triangular(U.mH, -(gX if left else gX.mH).matmul(X.mH if left else X),
                               upper=False)
        # gL = (L^{-H} gR U^H).tril(-1)
        gL = _solve_triangular(L.mH, gR.matmul(U.mH), upper=True, left=True,
                               unitriangular=True).tril(-1)
        return gL + gR.triu()
    # gR = -P^T op_3(X) op_1(op_2(gX)) P
    gR = -P.mT.matmul(X if left else X.mH).matmul(gX.mH if left else gX).matmul(P)
    # gR = gR L^{-H}
    gR = _solve_triangular(L.mH, gR, upper=True, left=False, unitriangular=True)
    # gU = (L^H gR U^{-H}).triu()
    gU = _solve_triangular(U.mH, L.mH.matmul(gR), upper=False, left=False).triu()
    return gR.tril(-1) + gU


# -- Householder products --------------------------------------------------------------------------
# Q = H_1 ... H_k with H_i = I - tau_i v_i v_i^H. With K_i := H_i_plus Q_grad^H H_i_minus the
# gradients are v_i_grad = (-tau_i v_i^H K_i)^H - tau_i K_i v_i and
# tau_i_grad = Tr(-v_i^H K_i v_i).conj(); K_{i+1} = H_{i+1}^{-1} K_i H_i, and H(tau)^{-1} =
# H(sigma) with sigma = tau / (tau ||v||^2 - 1).

def _apply_simple_transformation(u_full, v_full, t, K, left=True):
    """(I - t u v^H) K, or K (I - t u v^H) with left=False (torch's out-of-place branch)."""
    if left:
        transformation = (t.unsqueeze(-1) * u_full) * v_full.mH.matmul(K)
    else:
        transformation = K.matmul(t.unsqueeze(-1) * u_full) * v_full.mH
    return K - transformation


def householder_product_backward(grad, result, input_, tau, flip_order=False):
    """flip_order: run the sweep over range(k - 1, -1, -1) with the left and right reflector
    applications swapped (ormqr's left=False case)."""
    if grad is None or input_.numel() == 0 or tau.numel() == 0:
        return None, None
    m = input_.shape[-2]
    k = tau.shape[-1]
    # the forward reads only the strictly lower triangle and takes a unit diagonal
    input = input_.tril(-1) + _rt.eye(m, input_.shape[-1], dtype=input_.dtype,
                                      device=input_.device)
    # sigma with H(sigma_i) == H(tau_i)^{-1} (geqrf's tau always makes H(tau_i) invertible)
    input_first_k_cols = input.narrow(-1, 0, k)
    input_first_k_cols_norm_squared = (input_first_k_cols * input_first_k_cols.conj()).sum(-2)
    sigma = tau / (tau * input_first_k_cols_norm_squared - 1.0)
    K = result.matmul(grad.mH)

    def update_grad(i, v_full, t, K):
        v = v_full.narrow(-2, i, m - i)
        vHK = v.mH.matmul(K.narrow(-2, i, m - i))
        Kv = K.narrow(-1, i, m - i).matmul(v)
        t_unsqueezed = t.unsqueeze(-1)
        v_grad = (-t_unsqueezed * vHK).conj().squeeze(-2) - (t_unsqueezed * Kv).squeeze(-1)
        tau_grad = -(vHK.narrow(-1, i, m - i).matmul(v)).conj()
        return v_grad.unsqueeze(-1), tau_grad.squeeze(-1)

    def flip_i(i):
        return i if not flip_order else k - i - 1

    def next_i(i):
        return i + 1 if not flip_order else i - 1
    apply_left = not flip_order
    # K <- H_0^{-1} @ K
    zero_idx = flip_i(0)
    K = _apply_simple_transformation(input.narrow(-1, zero_idx, 1), input.narrow(-1, zero_idx, 1),
                                     sigma.narrow(-1, zero_idx, 1), K, left=apply_left)
    n_cols = input.shape[-1]
    input_grads = [None] * (k + 1 if k < n_cols else k)
    tau_grads = [None] * k
    for i_idx in range(k):
        i = flip_i(i_idx)
        v_i = input.narrow(-1, i, 1)
        t_i = tau.narrow(-1, i, 1)
        input_grads[i], tau_grads[i] = update_grad(i, v_i, t_i, K)
        # K <- H_{i + 1}^{-1} @ K @ H_i
        if i != flip_i(k - 1):
            i_next = next_i(i)
            v_i_next = input.narrow(-1, i_next, 1)
            s_i_next = sigma.narrow(-1, i_next, 1)
            K = _apply_simple_transformation(v_i_next, v_i_next, s_i_next, K, left=apply_left)
            K = _apply_simple_transformation(v_i, v_i, t_i, K, left=not apply_left)
    # only the first k columns are active in the forward: the others get zero gradients
    if k < n_cols:
        shape = list(input_.shape[:-1]) + [n_cols - k]
        input_grads[k] = _rt.zeros(shape, dtype=input_.dtype, device=input_.device)
    input_grad = _rt.cat(input_grads, -1)
    tau_grad = _rt.cat(tau_grads, -1)
    # the forward reads only the strictly lower triangle: so is the gradient
    return input_grad.tril(-1), tau_grad


def ormqr_backward(grad, result, self, tau, other, left, transpose, grad_output_mask):
    self_grad = tau_grad = other_grad = None
    if grad is None:
        return self_grad, tau_grad, other_grad
    self_requires_grad, tau_requires_grad, other_requires_grad = grad_output_mask
    if other_requires_grad:
        other_grad = _rt.ormqr(self, tau, grad, left, not transpose)
    if self_requires_grad or tau_requires_grad:
        if left ^ transpose:
            # B = H_1 ... H_k A: H_i's sensitivity is Tr(H_i_plus B B_grad^H H_i_minus dH_i),
            # householder_product_backward's with its grad = grad and result = result
            hpb_grad = grad if not transpose else grad.mH
            hpb_result = result if not transpose else result.mH
            self_grad, tau_grad = householder_product_backward(hpb_grad, hpb_result, self, tau)
        else:
            # the roles of grad and result swap (and transpose), and the sweep runs backwards
            hpb_grad = result.mH if not transpose else result
            hpb_result = grad.mH if not transpose else grad
            self_grad, tau_grad = householder_product_backward(hpb_grad, hpb_result, self, tau,
                                                               flip_order=True)
    return self_grad, tau_grad, other_grad
