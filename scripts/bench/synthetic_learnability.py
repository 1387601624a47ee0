"""synthetic_learnability.py: checks the claim in docs/data.md that a small CNN learns the synthetic
default dataset: a 3-conv network trained with torchvision transforms (RandomResizedCrop(64) + flip)
on its 100 train images, val accuracy per epoch. Needs torch, torchvision, pillow (e.g. the
build/bench-venv of data_vs_torchvision.sh).  usage: python synthetic_learnability.py DATA_DIR"""
import torch, torch.nn as nn, os
from PIL import Image
from torchvision import transforms
torch.manual_seed(0); torch.set_num_threads(2)
root = __import__('sys').argv[1]
def load(split):
    return [(os.path.join(root,l.split()[0]), int(l.split()[1])) for l in open(f'{root}/{split}_list.txt')]
tr, va = load('train'), load('val')
ttf = transforms.Compose([transforms.RandomResizedCrop(64), transforms.RandomHorizontalFlip(), transforms.ToTensor()])
vtf = transforms.Compose([transforms.Resize(73), transforms.CenterCrop(64), transforms.ToTensor()])
timgs=[Image.open(p).convert('RGB') for p,_ in tr]; vimgs=[Image.open(p).convert('RGB') for p,_ in va]
net = nn.Sequential(nn.Conv2d(3,16,3,2,1), nn.ReLU(), nn.Conv2d(16,32,3,2,1), nn.ReLU(), nn.Conv2d(32,64,3,2,1), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64,10))
opt = torch.optim.Adam(net.parameters(), 3e-3)
for ep in range(15):
    perm = torch.randperm(len(tr))
    for i in range(0, len(tr), 20):
        idx = perm[i:i+20]
        x = torch.stack([ttf(timgs[j]) for j in idx]); y = torch.tensor([tr[j][1] for j in idx])
        loss = nn.functional.cross_entropy(net(x), y); opt.zero_grad(); loss.backward(); opt.step()
    with torch.no_grad():
        x = torch.stack([vtf(im) for im in vimgs]); y = torch.tensor([l for _,l in va])
        acc = (net(x).argmax(1)==y).float().mean().item()
    print(ep, round(loss.item(),3), acc)
