# A Python program that never imports torch.
print(sum(range(10)))
