"""`python -m reftrace`: a short tour of the eager tensor library the tracer stands on.

It builds tensors and prints dtypes from promotion, strides of views and memory shared through a
view. The program is written against the name `torch`: under real torch 2.13 it prints the same.
(A later milestone turns this into "trace and check a model".)
"""
import reftrace as torch  # the same program runs under `import torch`


def show(label, t):
    print(f"{label:<28} dtype={t.dtype}  shape={tuple(t.shape)}  stride={t.stride()}  {t.tolist()}")


def main():
    x = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32)
    show("x", x)

    print("\npromotion (spec/tensors.md PRO-*)")
    show("x + 1       (int stays int)", x + 1)
    show("x * 0.5     (-> default)", x * 0.5)
    show("x / 2       (true division)", x / 2)
    show("x + 0-dim int64 tensor", x + torch.tensor(1))
    try:
        x.add_(0.5)
    except RuntimeError as e:
        print(f"{'x.add_(0.5)':<28} RuntimeError: {e}")

    print("\nviews and strides (spec/tensors.md STR-*)")
    show("x.t()", x.t())
    show("x[:, 1:]", x[:, 1:])
    show("x[0].unsqueeze(1)", x[0].unsqueeze(1))
    show("x[0].expand(2, 3)", x[0].expand(2, 3))
    show("x.t() * 2   (keeps layout)", x.t() * 2)

    x.t()[0].mul_(10)  # write through a view: the base sees it
    show("x after x.t()[0].mul_(10)", x)

    print("\nrepr, as torch prints it")
    print(x.t() / 4)


if __name__ == "__main__":
    main()
